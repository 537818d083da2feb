package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/internal/cli"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/release/pipeline"
	"github.com/reloader-dev/reloader/release/sign"
)

type publishFlags struct {
	registry, version, commit, source, ubiBase, main, out, key, trivy, trivyCache, trivyDB, policyPath, license string
	keyless                                                                                                     keylessFlags
	skipDBUpdate                                                                                                bool
	maxDBAge                                                                                                    time.Duration
	output                                                                                                      cli.Output
}

func newPublishCmd() *cobra.Command {
	f := &publishFlags{}
	c := &cobra.Command{
		Use:   "publish",
		Short: "Release to a real registry: build, SBOM, gate, sign, verify, publish digests",
		Long: `publish runs the release pipeline against --registry. The vulnerability gate
is mandatory (--trivy). Sign with a cosign key file (--key, password from
COSIGN_PASSWORD) or keyless (--keyless: Fulcio certificate for the GitHub
Actions OIDC token, every signature recorded in Rekor). Images are pushed by
digest first and tagged only after the gate passed and everything is signed;
the last step verifies the whole release offline as users would.

--skip-db-update judges the release with the Trivy database already in the
cache; publish refuses (exit 3, before building anything) unless that
database was built less than --max-db-age (default 24h) ago, so a real
release is never gated by a stale database.

Findings of UNKNOWN severity (not scored yet, typical of a fresh CVE) fail
the gate unless an exception accepts them or the release policy says
allowUnknown: true.` + cli.ExitCodesHelp,
		Example: `  # in GitHub Actions (see .github/workflows/release.yml)
  SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) reloader-release publish \
    --registry ghcr.io/reloader-dev --version v1.2.3 \
    --ubi-base registry.access.redhat.com/ubi9/ubi-minimal@sha256:... \
    --trivy trivy --keyless --out _out/release

  # private PKI
  COSIGN_PASSWORD=... reloader-release publish --registry registry.example/reloader \
    --version v1.2.3 --ubi-base ... --trivy trivy --key cosign.key

  # the key in an HSM (a reloader-release built with -tags pkcs11key);
  # the PIN from the environment, never in the URI on the command line
  COSIGN_PKCS11_PIN=... reloader-release publish --registry registry.example/reloader \
    --version v1.2.3 --ubi-base ... --trivy trivy \
    --key 'pkcs11:token=release;object=reloader?module-path=/usr/lib/softhsm/libsofthsm2.so'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPublish(cmd, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.registry, "registry", "", "repository prefix to publish to, e.g. ghcr.io/reloader-dev (required)")
	fl.StringVar(&f.version, "version", "", "release version, e.g. v1.2.3 (required)")
	fl.StringVar(&f.commit, "commit", "", "commit being released (default: git HEAD)")
	fl.StringVar(&f.source, "source", "https://github.com/reloader-dev/reloader", "source repository URL")
	fl.StringVar(&f.ubiBase, "ubi-base", "", "UBI base index pinned by digest, name@sha256:... (required)")
	fl.StringVar(&f.main, "main", "./cmd/reloader", "the controller's main package")
	fl.StringVar(&f.out, "out", "_out/release", "output directory")
	fl.StringVar(&f.key, "key", "", "signing key: a cosign private key file (password from COSIGN_PASSWORD), a pkcs11: URI (build with -tags pkcs11key) or a KMS URI")
	fl.StringVar(&f.trivy, "trivy", "", "trivy binary (required)")
	fl.StringVar(&f.trivyCache, "trivy-cache-dir", "", "trivy cache directory")
	fl.StringVar(&f.trivyDB, "trivy-db-repository", "", "OCI repository of the trivy DB (a mirror in air gaps)")
	fl.BoolVar(&f.skipDBUpdate, "skip-db-update", false, "use the trivy DB in the cache directory (refused if older than --max-db-age)")
	fl.DurationVar(&f.maxDBAge, "max-db-age", 24*time.Hour, "with --skip-db-update: the oldest trivy DB a release may be gated with")
	fl.StringVar(&f.policyPath, "policy", "", "release policy file (default: the built-in one, which reloader-release gate --print-policy prints)")
	fl.StringVar(&f.license, "license-file", "LICENSE", "license text shipped under /licenses")
	f.keyless.register(c)
	f.output.AddFlags(c.Flags())
	return c
}

// runPublish checks the flags a real release requires, then maps them to
// pipeline options and runs it. It stays whole: the checks and the mapping
// are one straight list, in the order the help lists the flags.
func runPublish(cmd *cobra.Command, f *publishFlags) error {
	if err := f.output.Check(); err != nil {
		return err
	}
	ctx := cmd.Context()
	if f.registry == "" || f.version == "" || f.ubiBase == "" || f.trivy == "" {
		return cli.Usage(errors.New("--registry, --version, --ubi-base and --trivy are required"))
	}
	if f.maxDBAge <= 0 {
		return cli.Usage(errors.New("--max-db-age must be positive: a real release is never gated by a database of any age"))
	}
	if (f.key == "") == !f.keyless.enabled {
		return cli.Usage(errors.New("sign with exactly one of --key or --keyless"))
	}
	if _, err := os.Stat(f.license); err != nil {
		return cli.Usage(fmt.Errorf("license file: %w", err))
	}
	created, err := sourceDateEpoch(".")
	if err != nil {
		return err
	}
	commit := f.commit
	if commit == "" {
		if commit, err = headCommit("."); err != nil {
			return err
		}
	}
	var signer *sign.Signer
	if f.key != "" {
		key, err := openKey(ctx, cmd, f.key)
		if err != nil {
			return err
		}
		defer key.Close()
		if signer, err = sign.FromSignerVerifier(key.SignerVerifier); err != nil {
			return cli.Usage(err)
		}
	}
	vopts, err := f.keyless.verifyOptions()
	if err != nil {
		return err
	}
	var newSigner func(context.Context) (*sign.Signer, error)
	if f.keyless.enabled {
		// The certificate is requested when signing starts: it is valid
		// for ten minutes and the build and scan take longer.
		newSigner = f.keyless.newSigner
	}
	res, err := pipeline.Run(ctx, pipeline.Options{
		Version: f.version, Commit: commit, Source: f.source, Created: created, Now: time.Now(),
		ModuleDir: ".", MainPackage: f.main, Registry: f.registry, StandardName: "reloader", UBIName: "reloader-ubi",
		UBIBase: f.ubiBase, LicenseFiles: []string{f.license}, Licenses: "Apache-2.0", Vendor: "Reloader contributors",
		Summary:     "Reloads Kubernetes workloads when their ConfigMaps and Secrets change",
		Description: "Reloader watches ConfigMaps and Secrets and rolls the Deployments, StatefulSets and DaemonSets that use them.",
		ChartDirs:   findCharts("."), OutDir: f.out, Signer: signer, NewSigner: newSigner, Verify: vopts, BuilderID: builderID(f.keyless.enabled),
		Scan: &pipeline.ScanOptions{PolicyPath: f.policyPath, Trivy: gate.TrivyOptions{Binary: f.trivy, CacheDir: f.trivyCache,
			DBRepository: f.trivyDB, SkipDBUpdate: f.skipDBUpdate}, MaxDBAge: f.maxDBAge},
		Remote: []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)},
		Log:    cmd.ErrOrStderr(),
	})
	if err != nil {
		return err
	}
	if f.output.JSON() {
		return cli.WriteJSON(cmd.OutOrStdout(), map[string]any{"lock": res.Lock, "lockPath": res.LockPath, "bundlePath": res.BundlePath, "imageSizes": res.ImageSizes})
	}
	data, err := os.ReadFile(res.LockPath)
	if err != nil {
		return err
	}
	_, err = cmd.OutOrStdout().Write(data)
	return err
}

// builderID is the provenance's builder: in GitHub Actions the workflow
// (the identity Fulcio certifies for a keyless release), else empty, which
// the pipeline records as the local builder.
func builderID(keyless bool) string {
	server, ref := os.Getenv("GITHUB_SERVER_URL"), os.Getenv("GITHUB_WORKFLOW_REF")
	if !keyless || server == "" || ref == "" {
		return ""
	}
	return server + "/" + ref
}

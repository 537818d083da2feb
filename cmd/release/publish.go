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

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
)

type publishFlags struct {
	registry, version, commit, source, ubiBase, main, out, key, trivy, trivyCache, trivyDB, policyPath, license string
	keyless                                                                                                     keylessFlags
	skipDBUpdate                                                                                                bool
	maxDBAge                                                                                                    time.Duration
	output                                                                                                      cli.Output
	// fromBuild and expectIndexes take the images of a build stage
	// (reloader-release build) instead of building.
	fromBuild     string
	expectIndexes []string
	// signatureFormat is sign.Format's: bundle, legacy or both.
	signatureFormat string
}

// newPublishCmd is publish's help and flags. It stays whole: the help
// explains the flags declared below it, and they are read together.
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

With --from-build it builds nothing: it releases the OCI layout a build stage
(reloader-release build) wrote, taking from that stage only the index
digests given with --expect-index, and refusing the layout unless every
manifest, config and layer hashes to them. SBOMs and provenance are then
generated here, from those bytes. The release workflow runs the two in
separate jobs, so the job that signs never ran the build.

A key release is signed in both forms by default (--signature-format both):
Sigstore bundles attached as OCI referrers, which cosign v3 verifies and v4
will only read, and the cosign .sig/.att tags CRI-O reads. bundle writes
only the former, legacy only the latter. A keyless release is always bundles.

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
	fl.StringVar(&f.fromBuild, "from-build", "", "release the images of this build stage's output directory (reloader-release build) instead of building; needs --expect-index")
	fl.StringSliceVar(&f.expectIndexes, "expect-index", nil, "with --from-build: NAME@sha256:HEX of each index the build stage reported, the only thing taken from it besides content that hashes to these")
	fl.StringVar(&f.signatureFormat, "signature-format", string(sign.FormatBoth), "with --key: bundle (Sigstore bundles as OCI referrers, cosign v3's format), legacy (cosign .sig/.att tags, which CRI-O reads) or both; keyless releases are always bundles")
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
	if err := release.CheckVersion(f.version); err != nil {
		return cli.Usage(fmt.Errorf("--version: %w", err))
	}
	if f.maxDBAge <= 0 {
		return cli.Usage(errors.New("--max-db-age must be positive: a real release is never gated by a database of any age"))
	}
	if (f.key == "") == !f.keyless.enabled {
		return cli.Usage(errors.New("sign with exactly one of --key or --keyless"))
	}
	format, err := sign.ParseFormat(f.signatureFormat)
	if err != nil {
		return cli.Usage(fmt.Errorf("--signature-format: %w", err))
	}
	if f.keyless.enabled && format == sign.FormatLegacy {
		return cli.Usage(errors.New("--signature-format legacy needs --key: a keyless release is signed with Sigstore bundles only"))
	}
	if (f.fromBuild == "") != (len(f.expectIndexes) == 0) {
		return cli.Usage(errors.New("--from-build and --expect-index go together: the build stage's directory and the digests it reported"))
	}
	o, err := productOptions(productFlags{registry: f.registry, version: f.version, commit: f.commit, source: f.source,
		ubiBase: f.ubiBase, main: f.main, out: f.out, license: f.license})
	if err != nil {
		return err
	}
	if f.fromBuild != "" {
		o.FromBuild, o.Built = f.fromBuild, &pipeline.BuildRecord{}
		for _, s := range f.expectIndexes {
			ix, err := pipeline.ParseBuiltIndex(s)
			if err != nil {
				return cli.Usage(fmt.Errorf("--expect-index: %w", err))
			}
			o.Built.Indexes = append(o.Built.Indexes, ix)
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
	o.ChartDirs, o.Signer, o.NewSigner, o.Verify, o.BuilderID = findCharts("."), signer, newSigner, vopts, builderID(f.keyless.enabled)
	o.SignatureFormat = format
	o.Scan = &pipeline.ScanOptions{PolicyPath: f.policyPath, Trivy: gate.TrivyOptions{Binary: f.trivy, CacheDir: f.trivyCache,
		DBRepository: f.trivyDB, SkipDBUpdate: f.skipDBUpdate}, MaxDBAge: f.maxDBAge}
	o.Remote = []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	o.Log = cmd.ErrOrStderr()
	res, err := pipeline.Run(ctx, o)
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

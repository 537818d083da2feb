// Command reloader-mirror copies a signed Reloader release, by digest, into
// an internal registry (Harbor, Artifactory, Nexus, Quay), directly or
// across an air gap through one archive, and verifies it offline first.
//
// Exit codes are internal/cli's table: 0 success, 1 error, 2 usage error,
// 3 verification refused (nothing was pushed).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/reloader-dev/reloader/internal/cli"
	"github.com/reloader-dev/reloader/internal/progress"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI and returns its exit code (see cli.ExitCode).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return cli.Report("reloader-mirror", root.ExecuteContext(ctx), stderr)
}

type globals struct {
	stdout, stderr io.Writer
	output         string
	// policy
	key, identity, identityRegexp, issuer, trustedRoot string
	trustedRootSHA256                                  string
	ignoreSCT, ignoreTlog, allowUnscanned              bool
	allowNoProvenance                                  bool
	scan                                               cli.ScanPolicyFlags
	// now is the time releases are judged at (zero: the wall clock).
	now time.Time
	// reviewing: the command is review, which reports the scan instead of
	// applying the scan policy.
	reviewing bool
	// registry
	caFile          string
	insecure, plain bool
	// release location
	lock, lockBundle, lockRef, archive, workDir string
	limits                                      archiveLimits
	// target
	target      string
	maps        []string
	concurrency int
	retries     int
	receipt     string
	adv         advisoryFlags
	expect      expectFlags
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	g := &globals{stdout: stdout, stderr: stderr}
	root := &cobra.Command{
		Use:   "reloader-mirror",
		Short: "Copy a signed Reloader release by digest into your registry, verified offline",
		Long: `reloader-mirror moves one Reloader release, as one signed unit, into an internal
registry: both image variants with every platform, the Helm chart (byte-exact),
SBOMs, attestations and signatures in both formats (cosign .sig/.att tags and
Sigstore bundles as OCI referrers). Digests never change.

Before the first byte is pushed it verifies, offline, the release lock's
signature and every signature the lock lists against the trust policy you
give (--key, or --certificate-identity + --certificate-oidc-issuer with a
trusted root). A release whose lock records no vulnerability scan is refused
unless --allow-unscanned is given, and one whose images or indexes lack SLSA
provenance from that signer, naming the lock's source and commit, unless
--allow-no-provenance is given. After pushing it reads everything back,
verifies again, and only then writes tags.` + advisoriesHelp + replayHelp + downgradeHelp + "\n" + cli.ScanPolicyHelp + cli.ExitCodesHelp,
		Example: `  # Connected side: carry the release across the air gap in one file
  reloader-mirror export --lock-ref ghcr.io/reloader-dev/reloader-release:v1.2.3 \
      --key cosign.pub -f reloader-v1.2.3.tar.zst

  # Disconnected side: verify offline, then push into Harbor
  reloader-mirror import -f reloader-v1.2.3.tar.zst --key cosign.pub \
      --target harbor.corp.example/platform/reloader

  # Then install pinned by digest
  reloader-mirror values -f reloader-v1.2.3.tar.zst --key cosign.pub \
      --target harbor.corp.example/platform/reloader`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVarP(&g.output, "output", "o", "text", "output format: text or json")
	pf.StringVar(&g.key, "key", "", "PEM public key that must have signed the release (cosign.pub)")
	pf.StringVar(&g.identity, "certificate-identity", "", "keyless: exact certificate identity (SAN) that must have signed")
	pf.StringVar(&g.identityRegexp, "certificate-identity-regexp", "", "keyless: regular expression the whole certificate identity must match (anchored: ^(?:EXPR)$)")
	pf.StringVar(&g.issuer, "certificate-oidc-issuer", "", "keyless: OIDC issuer of the signing certificate")
	pf.BoolVar(&g.allowUnscanned, "allow-unscanned", false, "accept a release whose lock records no vulnerability scan (built with --no-scan)")
	pf.BoolVar(&g.allowNoProvenance, "allow-no-provenance", false, "accept images and indexes without SLSA provenance signed by the release signer (provenance that is present is still checked)")
	g.scan.Register(root, true)
	pf.StringVar(&g.trustedRoot, "trusted-root", "", "keyless: trusted_root.json to verify certificates against")
	pf.StringVar(&g.trustedRootSHA256, "trusted-root-sha256", "", "keyless: use the archive's trusted_root.json only if its sha256 is this (hex, as the release notes publish it)")
	pf.BoolVar(&g.ignoreTlog, "insecure-ignore-tlog", false, "keyless: accept signatures without a transparency log entry (a private Sigstore without Rekor only)")
	pf.BoolVar(&g.ignoreSCT, "insecure-ignore-sct", false, "keyless: accept certificates without a certificate transparency timestamp (private CAs that log to no CT log only)")
	pf.StringVar(&g.caFile, "ca-file", "", "PEM CA bundle for registries with an internal CA")
	pf.BoolVar(&g.insecure, "insecure", false, "skip TLS certificate verification")
	pf.BoolVar(&g.plain, "plain-http", false, "talk plain HTTP to registries")
	pf.StringVar(&g.lock, "lock", "", "release lock file (reloader-release.json)")
	pf.StringVar(&g.lockBundle, "lock-bundle", "", "Sigstore bundle of the lock (default: <lock>.sigstore.json)")
	pf.StringVar(&g.lockRef, "lock-ref", "", "release lock in a registry, e.g. ghcr.io/reloader-dev/reloader-release:v1.2.3")
	pf.StringVarP(&g.archive, "file", "f", "", "release archive (.tar, .tar.zst or an OCI layout directory)")
	pf.StringVar(&g.workDir, "work-dir", "", "where to unpack archives (default: the system temporary directory)")
	g.limits.register(pf)
	g.adv.register(pf)

	root.AddCommand(g.planCmd(), g.copyCmd(), g.exportCmd(), g.importCmd(), g.verifyCmd(), g.valuesCmd(), g.policyCmd(),
		g.reviewCmd())
	g.replayRules(root)
	cli.Wire(root)
	return root
}

func (g *globals) targetFlags(c *cobra.Command, required bool) {
	c.Flags().StringVar(&g.target, "target", "", "target location, e.g. harbor.example/project/path or artifactory.example/docker-local/reloader")
	c.Flags().StringArrayVar(&g.maps, "map", nil, "map one repository: SOURCE=TARGET (SOURCE is the lock's repository or its path below the common prefix, e.g. charts/reloader=harbor.example/helm/reloader)")
	if required {
		_ = c.MarkFlagRequired("target")
	}
}

func (g *globals) transferFlags(c *cobra.Command) {
	c.Flags().IntVarP(&g.concurrency, "concurrency", "j", 4, "blobs transferred in parallel")
	c.Flags().IntVar(&g.retries, "retries", 5, "retries after a 5xx, throttling or a reset connection, with exponential backoff")
	c.Flags().StringVar(&g.receipt, "receipt", "", "write the receipt (source digest -> target reference) as JSON to this file")
	g.downgradeFlag(c)
}

// lockAndMapping verifies the release lock and maps its repositories to the
// target (with --map overrides): what values, verify and policy start from.
func (g *globals) lockAndMapping(in *releaseInput) (*release.Lock, *mirror.Mapping, error) {
	l, _, err := in.verifier.Lock(in.lockJSON, in.lockBundle)
	if err != nil {
		return nil, nil, err
	}
	repos, err := g.repos()
	if err != nil {
		return nil, nil, err
	}
	m, err := mirror.NewMapping(g.target, l, repos)
	if err != nil {
		return nil, nil, err
	}
	return l, m, nil
}

func (g *globals) repos() (map[string]string, error) {
	out := map[string]string{}
	for _, m := range g.maps {
		k, v, ok := strings.Cut(m, "=")
		if !ok || k == "" || v == "" {
			return nil, cli.Usage(fmt.Errorf("--map %q: want SOURCE=TARGET", m))
		}
		out[k] = v
	}
	return out, nil
}

func (g *globals) client() (*registry.Client, error) {
	return registry.New(registry.Options{CAFile: g.caFile, Insecure: g.insecure, PlainHTTP: g.plain, UserAgent: "reloader-mirror"})
}

func (g *globals) progress() progress.Reporter {
	if g.output == "json" {
		return progress.New(g.stderr, progress.Options{Terminal: false, Interval: 10 * time.Second})
	}
	f, ok := g.stderr.(*os.File)
	return progress.New(g.stderr, progress.Options{Terminal: ok && term.IsTerminal(int(f.Fd()))})
}

// release is where the release is read from and its trust material.
type releaseInput struct {
	src                  mirror.Source
	lockJSON, lockBundle []byte
	policy               trust.Policy
	verifier             *trust.Verifier
	archive              *mirror.OpenedArchive
	close                func()
	// standing is what the advisories say about the release.
	standing *mirror.Standing
}

// open resolves --file, --lock or --lock-ref, and the trust policy. The
// archive's trusted material is used only where the user did not give their
// own, and the identity is always the user's.
func (g *globals) open(ctx context.Context, c *registry.Client) (*releaseInput, error) {
	if g.output != "text" && g.output != "json" {
		return nil, cli.Usage(fmt.Errorf("--output %q: want text or json", g.output))
	}
	n := 0
	for _, s := range []string{g.archive, g.lock, g.lockRef} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return nil, cli.Usage(errors.New("give exactly one of --file (archive), --lock (file) or --lock-ref (registry)"))
	}
	in := &releaseInput{close: func() {}}
	pf := trust.PolicyFiles{KeyFile: g.key, Identity: g.identity, IdentityRegexp: g.identityRegexp, Issuer: g.issuer,
		TrustedRootFile: g.trustedRoot, TrustedRootSHA256: g.trustedRootSHA256, IgnoreSCT: g.ignoreSCT, IgnoreTlog: g.ignoreTlog}
	if g.trustedRootSHA256 != "" && g.archive == "" && g.trustedRoot == "" {
		return nil, cli.Usage(errors.New("--trusted-root-sha256 checks an archive's trusted_root.json (--file) or --trusted-root; give one"))
	}
	switch {
	case g.archive != "":
		a, err := mirror.OpenArchiveLimited(ctx, g.archive, g.workDir, g.limits.limits())
		if err != nil {
			return nil, err
		}
		in.archive, in.src, in.lockJSON, in.lockBundle = a, a.Layout, a.LockJSON, a.LockBundle
		in.close = func() { _ = a.Close() }
		if pf.TrustedRootFile == "" && len(a.TrustedRootJSON) > 0 {
			pf.TrustedRootJSON, pf.TrustedRootSource = a.TrustedRootJSON, g.archive+":"+"trust/trusted_root.json"
		}
	case g.lock != "":
		var err error
		if in.lockJSON, err = os.ReadFile(g.lock); err != nil {
			return nil, fmt.Errorf("reading the lock: %w", err)
		}
		b := g.lockBundle
		if b == "" {
			b = g.lock + ".sigstore.json"
		}
		if in.lockBundle, err = os.ReadFile(b); err != nil {
			return nil, fmt.Errorf("reading the lock's signature bundle: %w", err)
		}
		in.src = &mirror.RegistrySource{Client: c, Name: "source registries"}
	default:
		var err error
		if in.lockJSON, in.lockBundle, err = mirror.FetchLock(ctx, c, g.lockRef); err != nil {
			return nil, err
		}
		in.src = &mirror.RegistrySource{Client: c, Name: "source registries"}
	}
	if pf.KeyFile == "" && pf.Identity == "" && pf.IdentityRegexp == "" {
		in.close()
		return nil, cli.Usage(errors.New("no trust policy: give --key, or --certificate-identity(-regexp) with --certificate-oidc-issuer"))
	}
	p, err := trust.LoadPolicy(pf)
	if err != nil {
		in.close()
		return nil, cli.Usage(err)
	}
	p.RequireScan = !g.allowUnscanned
	p.RequireProvenance = !g.allowNoProvenance
	p.Expect = g.binding()
	if p.Scan, err = g.scanPolicy(); err != nil {
		in.close()
		return nil, err
	}
	if in.verifier, err = trust.NewVerifier(p); err != nil {
		in.close()
		return nil, cli.Usage(err)
	}
	in.policy = p
	if err := g.checkScanEarly(in); err != nil {
		in.close()
		return nil, err
	}
	return in, nil
}

func (g *globals) emit(v any, text func(w io.Writer)) error {
	if g.output == "json" {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	text(g.stdout)
	return nil
}

func (g *globals) planCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "plan",
		Short: "Verify a release offline and show what a copy would move; moves nothing",
		Example: `  reloader-mirror plan --lock-ref ghcr.io/reloader-dev/reloader-release:v1.2.3 --key cosign.pub \
      --target harbor.corp.example/platform/reloader
  reloader-mirror plan -f reloader-v1.2.3.tar.zst --key cosign.pub -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error {
				repos, err := g.repos()
				if err != nil {
					return err
				}
				po := mirror.PlanOptions{Source: in.src, LockJSON: in.lockJSON, LockBundle: in.lockBundle, Policy: in.policy, Repos: repos}
				if g.target != "" {
					po.Client, po.Target = cl, g.target
				}
				p, err := mirror.Plan(cmd.Context(), po)
				if err != nil {
					return err
				}
				return g.emit(p, func(w io.Writer) {
					fmt.Fprintf(w, "Release %s from %s\n", p.Version, p.Source)
					fmt.Fprintf(w, "Trusted: %s\n", describeTrust(p.Trust))
					fmt.Fprintf(w, "Signatures: all %d signed artifacts verified offline\n", len(p.Verification.Subjects))
					fmt.Fprintf(w, "%d manifests, %d blobs, %s in total", p.Manifests, p.Blobs, progress.Bytes(p.TotalBytes))
					if p.Target != "" {
						fmt.Fprintf(w, ", %s already at %s, %s to move\n", progress.Bytes(p.BytesPresent), p.Target, progress.Bytes(p.BytesToMove))
						keys := make([]string, 0, len(p.Referrers))
						for k := range p.Referrers {
							keys = append(keys, k)
						}
						sort.Strings(keys)
						for _, k := range keys {
							fmt.Fprintf(w, "  %s: %s\n", k, p.Referrers[k])
						}
					} else {
						fmt.Fprintln(w)
					}
					for _, a := range p.Artifacts {
						fmt.Fprintf(w, "  %-12s %-14s %-14s %s %s\n", a.Kind, a.Name, a.Platform, a.Digest[:19], a.Target)
					}
				})
			})
		},
	}
	g.targetFlags(c, false)
	return c
}

func describeTrust(s trust.Summary) string {
	if s.Mode == "key" {
		return "public key sha256:" + s.KeySHA256
	}
	id := s.Identity
	if id == "" {
		id = "~" + s.IdentityRegexp
	}
	return fmt.Sprintf("keyless identity %s from %s (trusted root %s)", id, s.Issuer, s.TrustedRoot)
}

func (g *globals) mirrorRun(cmd *cobra.Command, in *releaseInput, cl *registry.Client) error {
	repos, err := g.repos()
	if err != nil {
		return err
	}
	rc, err := mirror.Mirror(cmd.Context(), mirror.Options{
		Source: in.src, LockJSON: in.lockJSON, LockBundle: in.lockBundle, Policy: in.policy,
		Client: cl, Target: g.target, Repos: repos, Concurrency: g.concurrency, Retries: g.retries,
		Progress: g.progress(), AllowDowngrade: g.expect.allowDowngrade,
	})
	if err != nil {
		return err
	}
	if g.receipt != "" {
		b, err := json.MarshalIndent(rc, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the receipt: %w", err)
		}
		if err := os.WriteFile(g.receipt, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("writing the receipt: %w", err)
		}
	}
	return g.emit(rc, func(w io.Writer) {
		s := rc.Stats
		fmt.Fprintf(w, "Mirrored %s to %s in %s: verified before and after push\n", rc.Version, rc.Target, rc.Duration)
		fmt.Fprintf(w, "  blobs: %d pushed (%s), %d mounted, %d already present\n", s.BlobsPushed, progress.Bytes(s.BytesPushed), s.BlobsMounted, s.BlobsPresent)
		fmt.Fprintf(w, "  manifests: %d pushed, %d present; tags: %d written, %d present; fallback indexes: %d\n", s.ManifestsPushed, s.ManifestsPresent, s.TagsWritten, s.TagsPresent, s.FallbackIndexes)
		fmt.Fprintf(w, "  lock: %s\n", rc.Lock)
		printTagChanges(w, rc.Tags)
		if rc.Downgrade != nil {
			fmt.Fprintf(w, "  downgrade: %s over %s, allowed by --allow-downgrade\n", rc.Downgrade.Version, rc.Downgrade.NewestAtTarget)
		}
	})
}

func (g *globals) copyCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "copy",
		Short: "Copy a release registry to registry, verified before and after",
		Long: `copy verifies the release at its source, pushes it to --target by digest,
verifies the copy at the target, and only then writes tags.` + tagsHelp,
		Example: `  reloader-mirror copy --lock-ref ghcr.io/reloader-dev/reloader-release:v1.2.3 --key cosign.pub \
      --target harbor.corp.example/platform/reloader --receipt receipt.json
  # Artifactory repository key, chart to a separate Helm repository
  reloader-mirror copy --lock reloader-release.json --key cosign.pub \
      --target artifactory.corp.example/docker-local/reloader \
      --map charts/reloader=artifactory.corp.example/helm-oci/reloader`,
		Args: cobra.NoArgs,
		RunE: g.mirrorCommand,
	}
	g.targetFlags(c, true)
	g.transferFlags(c)
	return c
}

// mirrorCommand is copy and import: open the source (a registry lock or an
// archive), then verify and push.
func (g *globals) mirrorCommand(cmd *cobra.Command, _ []string) error {
	return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error { return g.mirrorRun(cmd, in, cl) })
}

// withRelease opens the registry client and the release the flags name (a
// lock in a registry or a file, or an archive), runs fn, and closes both.
func (g *globals) withRelease(cmd *cobra.Command, fn func(*registry.Client, *releaseInput) error) error {
	cl, err := g.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	in, err := g.open(cmd.Context(), cl)
	if err != nil {
		return err
	}
	defer in.close()
	if err := g.applyStanding(cmd, cl, in); err != nil {
		return err
	}
	return fn(cl, in)
}

func (g *globals) importCmd() *cobra.Command {
	rf := &rescanFlags{}
	c := &cobra.Command{
		Use:   "import",
		Short: "Push an archive into a registry after verifying it completely, offline",
		Long: `import checks the archive's checksums, the lock's signature and every
artifact's signatures before the first byte is pushed; then it pushes in a
safe order, verifies the copy at the target, and writes tags last.` + tagsHelp,
		Example: `  reloader-mirror import -f reloader-v1.2.3.tar.zst --key cosign.pub \
      --target harbor.corp.example/platform/reloader
  reloader-mirror import -f reloader-v1.2.3.tar.zst \
      --certificate-identity https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3 \
      --certificate-oidc-issuer https://token.actions.githubusercontent.com \
      --trusted-root-sha256 <sha256 of trusted_root.json, as the release notes publish it> --expect-version v1.2.3 \
      --target quay.corp.example/reloader -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if g.archive == "" {
				return cli.Usage(errors.New("import needs --file"))
			}
			return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error {
				if err := g.rescan(cmd, in, rf); err != nil {
					return err
				}
				return g.mirrorRun(cmd, in, cl)
			})
		},
	}
	g.targetFlags(c, true)
	g.transferFlags(c)
	rf.register(c)
	return c
}

func (g *globals) exportCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "export",
		Short: "Verify a release and write it to one archive for the air gap",
		Example: `  reloader-mirror export --lock-ref ghcr.io/reloader-dev/reloader-release:v1.2.3 --key cosign.pub \
      --to reloader-v1.2.3.tar.zst
  reloader-mirror export --lock reloader-release.json --key cosign.pub --to ./reloader-layout  # a directory; re-runs resume`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return cli.Usage(errors.New("export needs --to"))
			}
			return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error {
				eo := mirror.ExportOptions{Source: in.src, LockJSON: in.lockJSON, LockBundle: in.lockBundle, Policy: in.policy,
					Path: out, Concurrency: g.concurrency, Progress: g.progress()}
				var err error
				if g.key != "" {
					if eo.PublicKeyPEM, err = os.ReadFile(g.key); err != nil {
						return cli.Usage(fmt.Errorf("--key: %w", err))
					}
				}
				if g.trustedRoot != "" {
					if eo.TrustedRootJSON, err = os.ReadFile(g.trustedRoot); err != nil {
						return cli.Usage(fmt.Errorf("--trusted-root: %w", err))
					}
				}
				res, err := mirror.Export(cmd.Context(), eo)
				if err != nil {
					return err
				}
				return g.emit(res, func(w io.Writer) {
					fmt.Fprintf(w, "Exported %s to %s: %d manifests, %d blobs, %s (verified)\n", res.Version, res.Path, res.Manifests, res.Blobs, progress.Bytes(res.Bytes))
				})
			})
		},
	}
	c.Flags().StringVar(&out, "to", "", "archive to write: NAME.tar, NAME.tar.zst (zstd) or a directory (OCI layout)")
	c.Flags().IntVarP(&g.concurrency, "concurrency", "j", 4, "blobs fetched in parallel")
	return c
}

func (g *globals) verifyCmd() *cobra.Command {
	rf := &rescanFlags{}
	c := &cobra.Command{
		Use:   "verify",
		Short: "Verify a release in a registry or an archive against a trust policy, offline",
		Example: `  reloader-mirror verify -f reloader-v1.2.3.tar.zst --key cosign.pub
  reloader-mirror verify --lock-ref harbor.corp.example/platform/reloader/reloader-release:v1.2.3 \
      --key cosign.pub --target harbor.corp.example/platform/reloader -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error {
				src := in.src
				if g.target != "" {
					// Verify the copy at the target rather than the source the
					// lock names.
					_, m, err := g.lockAndMapping(in)
					if err != nil {
						return err
					}
					src = &mirror.RegistrySource{Client: cl, Map: m.Repository, Name: g.target}
				}
				if err := g.rescan(cmd, in, rf); err != nil {
					return err
				}
				prep, err := mirror.Prepare(cmd.Context(), src, in.lockJSON, in.lockBundle, in.verifier)
				if err != nil {
					var ve *mirror.VerificationError
					if errors.As(err, &ve) && g.output == "json" {
						_ = g.emit(ve.Result, nil)
					}
					return err
				}
				return g.emit(withStanding(prep.Verification, in.standing), func(w io.Writer) {
					fmt.Fprintf(w, "Release %s verified offline from %s against %s\n", prep.Lock.Version, src, describeTrust(in.policy.Summary()))
					describeStanding(w, in.standing)
					for _, s := range prep.Verification.Subjects {
						fmt.Fprintf(w, "  %-12s %-14s %s  %d signature(s) ok\n", s.Kind, s.Name, s.Digest, len(s.Signatures))
					}
				})
			})
		},
	}
	g.targetFlags(c, false)
	rf.register(c)
	return c
}

func (g *globals) valuesCmd() *cobra.Command {
	var variant string
	var check bool
	c := &cobra.Command{
		Use:   "values",
		Short: "Print digest-pinned Helm values and the helm install command for the target",
		Long: "values" + verifiesHelp + ` Then it prints Helm values that pin
every image by digest at --target, and the helm install command for the
chart at --target by digest. --check-chart also reads the chart at the
target and confirms it honours image.digest.`,
		Example: `  reloader-mirror values --lock reloader-release.json --key cosign.pub \
      --target harbor.corp.example/platform/reloader > values.yaml
  reloader-mirror values -f reloader-v1.2.3.tar.zst --key cosign.pub --target harbor.corp.example/platform/reloader --variant ubi
  reloader-mirror values --lock-ref harbor.corp.example/platform/reloader/reloader-release:v1.2.3 --key cosign.pub \
      --target harbor.corp.example/platform/reloader --check-chart -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error {
				prep, m, err := g.verifiedRelease(cmd.Context(), cl, in)
				if err != nil {
					return err
				}
				l := prep.Lock
				v, err := mirror.RenderValues(l, m)
				if err != nil {
					return err
				}
				if check {
					tsrc := &mirror.RegistrySource{Client: cl, Map: m.Repository, Name: g.target}
					gr, err := mirror.Build(cmd.Context(), l, tsrc)
					if err != nil {
						return fmt.Errorf("reading the release at the target: %w", err)
					}
					if err := mirror.CheckChart(cmd.Context(), l, gr, tsrc); err != nil {
						return err
					}
				}
				if _, ok := v.YAML[variant]; !ok {
					return cli.Usage(fmt.Errorf("--variant %q: the release has %v", variant, keys(v.YAML)))
				}
				return g.emit(v, func(w io.Writer) {
					fmt.Fprint(w, v.YAML[variant])
					fmt.Fprintf(w, "# install:\n# %s\n", v.Install[variant])
				})
			})
		},
	}
	g.targetFlags(c, true)
	c.Flags().StringVar(&variant, "variant", "standard", "image variant for the text output: standard or ubi (json has both)")
	c.Flags().BoolVar(&check, "check-chart", false, "read the chart at the target and confirm it honours image.digest")
	return c
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Command reloader-mirror copies a signed Reloader release, by digest, into
// an internal registry (Harbor, Artifactory, Nexus, Quay), directly or
// across an air gap through one archive, and verifies it offline first.
//
// Exit codes are internal/cli's table: 0 success, 1 error, 2 usage error,
// 3 verification refused (nothing was pushed).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/internal/progress"
	"github.com/reloader-dev/reloader/mirror/registry"
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
	out            cli.Output
	// policy
	trust                             cli.TrustFlags
	allowUnscanned, allowNoProvenance bool
	scan                              cli.ScanPolicyFlags
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
	// files are the -f values: one archive, or the parts of a split one
	// (archive is then set from them, for messages).
	files  []string
	limits archiveLimits
	// target
	target      string
	maps        []string
	concurrency int
	retries     int
	receipt     string
	adv         advisoryFlags
	expect      expectFlags
	// verifiers are every verifier the command made.
	verifiers verifiers
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	return (&globals{stdout: stdout, stderr: stderr}).root()
}

// root composes the command tree on g. Most of its length is the root's
// help text, which reads best in one piece.
func (g *globals) root() *cobra.Command {
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
      --target harbor.corp.example/platform/reloader

  # During a signing-key rotation: accept the new key, and the old one
  # through 31 January 2027 (by this machine's clock), then refuse it
  reloader-mirror import -f reloader-v1.2.3.tar.zst \
      --key new.pub --key old.pub,not-after=2027-01-31 \
      --target harbor.corp.example/platform/reloader`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	g.out.AddFlags(pf)
	g.trust.AddFlags(pf)
	g.trust.AddMirrorFlags(pf)
	pf.BoolVar(&g.allowUnscanned, "allow-unscanned", false, "accept a release whose lock records no vulnerability scan (built with --no-scan)")
	pf.BoolVar(&g.allowNoProvenance, "allow-no-provenance", false, "accept images and indexes without SLSA provenance signed by the release signer (provenance that is present is still checked)")
	g.scan.Register(root, true)
	pf.StringVar(&g.caFile, "ca-file", "", "PEM CA bundle for registries with an internal CA")
	pf.BoolVar(&g.insecure, "insecure", false, "skip TLS certificate verification")
	pf.BoolVar(&g.plain, "plain-http", false, "talk plain HTTP to registries")
	pf.StringVar(&g.lock, "lock", "", "release lock file (reloader-release.json)")
	pf.StringVar(&g.lockBundle, "lock-bundle", "", "Sigstore bundle of the lock (default: <lock>.sigstore.json)")
	pf.StringVar(&g.lockRef, "lock-ref", "", "release lock in a registry, e.g. ghcr.io/reloader-dev/reloader-release:v1.2.3")
	pf.StringArrayVarP(&g.files, "file", "f", nil, "release archive (.tar, .tar.zst or an OCI layout directory); for a split archive its part list (NAME.parts) or a directory holding parts, repeated for parts in several places")
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
	c.Flags().IntVarP(&g.concurrency, "concurrency", "j", 4, "requests in parallel to each registry: blob transfers, and the reads and checks of manifests, signatures and tags")
	c.Flags().IntVar(&g.retries, "retries", 5, "retries after a 5xx, throttling or a reset connection, with exponential backoff")
	c.Flags().StringVar(&g.receipt, "receipt", "", "write the receipt (source digest -> target reference) as JSON to this file")
	g.downgradeFlag(c)
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
	if g.out.JSON() {
		return progress.New(g.stderr, progress.Options{Terminal: false, Interval: 10 * time.Second})
	}
	f, ok := g.stderr.(*os.File)
	return progress.New(g.stderr, progress.Options{Terminal: ok && term.IsTerminal(int(f.Fd()))})
}

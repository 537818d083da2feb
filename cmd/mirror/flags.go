package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/internal/progress"
	"github.com/reloader-dev/reloader/mirror/registry"
)

// app is what every command of one run shares: where it writes, the clock
// releases are judged by, and the record of what was verified.
type app struct {
	stdout, stderr io.Writer
	// now is the time releases are judged at (zero: the wall clock).
	now time.Time
	// verifiers are every verifier the run's command made.
	verifiers verifiers
}

// command is one command's flags, the groups it declares on itself (as
// cmd/release's commands do): a group a command does not declare keeps its
// zero value. Every command takes a release, so each declares the output,
// registry, source and judgment groups (releaseFlags); target and transfer
// are declared by the commands that have a target or move bytes.
type command struct {
	*app
	out cli.Output
	registryFlags
	sourceFlags
	judgmentFlags
	targetFlags
	transferFlags
}

// command starts a command's flags; a command that declares no output
// flag (policy writes YAML) reports as text.
func (a *app) command() *command { return &command{app: a, out: cli.Output{Format: "text"}} }

// registryFlags say how registries are reached.
type registryFlags struct {
	caFile          string
	insecure, plain bool
}

func (r *registryFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&r.caFile, "ca-file", "", "PEM CA bundle for registries with an internal CA")
	fs.BoolVar(&r.insecure, "insecure", false, "skip TLS certificate verification")
	fs.BoolVar(&r.plain, "plain-http", false, "talk plain HTTP to registries")
}

func (r *registryFlags) client() (*registry.Client, error) {
	return registry.New(registry.Options{CAFile: r.caFile, Insecure: r.insecure, PlainHTTP: r.plain, UserAgent: "reloader-mirror"})
}

// sourceFlags say where the release is read from: a lock file, a lock in a
// registry, or an archive (whole or in parts).
type sourceFlags struct {
	lock, lockBundle, lockRef, archive, workDir string
	// files are the -f values: one archive, or the parts of a split one
	// (archive is then set from them, for messages).
	files  []string
	limits archiveLimits
}

// registerFile declares -f, the archive; policy gives -f its own meaning
// (every release it approves) and does not declare this one.
func (s *sourceFlags) registerFile(fs *pflag.FlagSet) {
	fs.StringArrayVarP(&s.files, "file", "f", nil, "release archive (.tar, .tar.zst or an OCI layout directory); for a split archive its part list (NAME.parts) or a directory holding parts, repeated for parts in several places")
}

func (s *sourceFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&s.lock, "lock", "", "release lock file (reloader-release.json)")
	fs.StringVar(&s.lockBundle, "lock-bundle", "", "Sigstore bundle of the lock (default: <lock>.sigstore.json)")
	fs.StringVar(&s.lockRef, "lock-ref", "", "release lock in a registry, e.g. ghcr.io/reloader-dev/reloader-release:v1.2.3")
	fs.StringVar(&s.workDir, "work-dir", "", "where to unpack archives (default: the system temporary directory)")
	s.limits.register(fs)
}

// judgmentFlags are the trust policy and the rules a release is judged by:
// its signer, what its lock must record, its advisories and support, and
// the version asked for.
type judgmentFlags struct {
	trust                             cli.TrustFlags
	allowUnscanned, allowNoProvenance bool
	scan                              cli.ScanPolicyFlags
	adv                               advisoryFlags
	expect                            expectFlags
	// reviewing: the command is review, which reports the scan instead of
	// applying the scan policy.
	reviewing bool
}

func (j *judgmentFlags) register(c *cobra.Command) {
	fs := c.Flags()
	j.trust.AddFlags(fs)
	j.trust.AddMirrorFlags(fs)
	fs.BoolVar(&j.allowUnscanned, "allow-unscanned", false, "accept a release whose lock records no vulnerability scan (built with --no-scan)")
	fs.BoolVar(&j.allowNoProvenance, "allow-no-provenance", false, "accept images and indexes without SLSA provenance signed by the release signer (provenance that is present is still checked)")
	j.scan.Register(c)
	j.adv.register(fs)
	fs.StringVar(&j.expect.version, "expect-version", "",
		"refuse the release unless its signed lock is exactly this version, e.g. v1.2.3 (exit 3)")
}

// releaseFlags declares on c the groups every command takes: the output
// format, how registries are reached, where the release is read from, and
// what it is judged by.
func (g *command) releaseFlags(c *cobra.Command) {
	g.out.AddFlags(c.Flags())
	g.sourceFlags.registerFile(c.Flags())
	g.releaseFlagsBut(c)
}

// releaseFlagsBut declares the groups but the output format and -f, for a
// command that gives those flags other meanings.
func (g *command) releaseFlagsBut(c *cobra.Command) {
	g.registryFlags.register(c.Flags())
	g.sourceFlags.register(c.Flags())
	g.judgmentFlags.register(c)
}

// targetFlags say where the release goes, repository by repository.
type targetFlags struct {
	target string
	maps   []string
}

func (t *targetFlags) register(c *cobra.Command, required bool) {
	c.Flags().StringVar(&t.target, "target", "", "target location, e.g. harbor.example/project/path or artifactory.example/docker-local/reloader")
	c.Flags().StringArrayVar(&t.maps, "map", nil, "map one repository: SOURCE=TARGET (SOURCE is the lock's repository or its path below the common prefix, e.g. charts/reloader=harbor.example/helm/reloader)")
	if required {
		_ = c.MarkFlagRequired("target")
	}
}

// repos are the --map overrides, source repository to target.
func (t *targetFlags) repos() (map[string]string, error) {
	out := map[string]string{}
	for _, m := range t.maps {
		k, v, ok := strings.Cut(m, "=")
		if !ok || k == "" || v == "" {
			return nil, cli.Usage(fmt.Errorf("--map %q: want SOURCE=TARGET", m))
		}
		out[k] = v
	}
	return out, nil
}

// transferFlags say how bytes move: in parallel, with retries, and where
// the receipt of what moved is written.
type transferFlags struct {
	concurrency int
	retries     int
	receipt     string
}

// transferFlagsOn declares the transfer flags of copy and import, with
// --allow-downgrade, since both push over what the target holds.
func (g *command) transferFlagsOn(c *cobra.Command) {
	c.Flags().IntVarP(&g.concurrency, "concurrency", "j", 4, "requests in parallel to each registry: blob transfers, and the reads and checks of manifests, signatures and tags")
	c.Flags().IntVar(&g.retries, "retries", 5, "retries after a 5xx, throttling or a reset connection, with exponential backoff")
	c.Flags().StringVar(&g.receipt, "receipt", "", "write the receipt (source digest -> target reference) as JSON to this file")
	c.Flags().BoolVar(&g.expect.allowDowngrade, "allow-downgrade", false,
		"push a release older than the newest the target holds (refused otherwise); recorded in the receipt")
}

func (g *command) progress() progress.Reporter {
	if g.out.JSON() {
		return progress.New(g.stderr, progress.Options{Terminal: false, Interval: 10 * time.Second})
	}
	f, ok := g.stderr.(*os.File)
	return progress.New(g.stderr, progress.Options{Terminal: ok && term.IsTerminal(int(f.Fd()))})
}

// emit writes v as indented JSON with -o json, else runs text.
func (g *command) emit(v any, text func(w io.Writer)) error {
	return g.out.Emit(g.stdout, v, text)
}

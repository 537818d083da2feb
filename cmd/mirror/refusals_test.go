package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
	testregistry "github.com/reloader-dev/reloader/test/registry"
)

// refusalRow is one rule of the judgment: a release it refuses, how the
// refusal is worded, and the flag that turns it into a recorded warning
// (none where the user has nothing to accept: a forgery, a version that does
// not parse, another release than the one asked for).
type refusalRow struct {
	rule string
	// in names the release: a lock reference or a lock file (with its
	// bundle beside it), and the archive import reads.
	lockRef, lockFile, archive string
	// target is where copy and import push; empty: a fresh registry. It
	// holds held, and heldTags are its lock tags, which a refusal leaves.
	target, heldTags string
	held             *releasetest.Release
	// extra flags every command gets (--expect-version); refuseWith flags
	// only the refusal is run with: the user's own limit (--max-scan-age),
	// whose absence is the acceptance.
	extra, refuseWith []string
	// says is what the refusal must name.
	says []string
	// accept turns the refusal into a warning, recorded as recorded says.
	accept   []string
	recorded string
	// acceptAtTarget are the flags copy and import also need to push to a
	// copy of target (it holds a newer release).
	acceptAtTarget []string
	// commands the rule applies to; nil: every command.
	commands []string
	// reviewShows is what review's report shows of a release the scan rules
	// refuse (review reports the scan, scanCommands); reviewFailOn is how
	// review --fail-on vulnerability refuses it, where it does.
	reviewShows  []string
	reviewFailOn string
}

var everyCommand = []string{"plan", "copy", "export", "import", "verify", "values", "policy", "review"}

// One table, every command by every refusal (issue 48), on releases made by
// the real pipeline into a CNCF distribution registry: exit 3, the release
// and the rule named, and nothing pushed, tagged or written; each accept
// flag turns its refusal into a warning recorded in -o json and the receipt.
// The scan rules (a database too old, an exception expired since the cut)
// are rows too (scanrefusals_test.go), with review's column its report.
func TestEveryCommandRefusesWhatTheRulesRefuse(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("publishes ten releases into CNCF distribution registries")
	}
	f := newRefusalFixture(t)
	for _, row := range f.rows {
		commands := row.commands
		if commands == nil {
			commands = everyCommand
		}
		for _, cmd := range commands {
			t.Run(row.rule+"/"+cmd, func(t *testing.T) {
				t.Parallel()
				f.refuses(t, row, cmd)
				if row.accept != nil {
					f.accepts(t, row, cmd)
				}
			})
		}
		if row.reviewShows != nil {
			t.Run(row.rule+"/review reports it", func(t *testing.T) {
				t.Parallel()
				f.reviewReports(t, row)
			})
		}
	}
}

// refuses runs cmd on the row's release and checks the refusal and that
// nothing was written.
func (f *refusalFixture) refuses(t *testing.T, row refusalRow, cmd string) {
	out := filepath.Join(t.TempDir(), "out")
	target := row.target
	if target == "" {
		target = f.freshTarget(t)
	}
	args := append(f.args(row, cmd, target, out), row.refuseWith...)
	code, stdout, stderr := runCLI(t, args...)
	if code != cli.ExitRefused {
		t.Fatalf("%s: exit %d, want %d\n%s", strings.Join(args, " "), code, cli.ExitRefused, stderr)
	}
	for _, s := range row.says {
		if !strings.Contains(stderr, s) {
			t.Errorf("the refusal does not name %q:\n%s", s, stderr)
		}
	}
	if (cmd == "values" || cmd == "policy") && strings.TrimSpace(stdout) != "" {
		t.Errorf("%s printed what it refused:\n%s", cmd, stdout)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s wrote %s", cmd, out)
	}
	if (cmd == "copy" || cmd == "import") && row.target == "" {
		if repos := catalog(t, strings.SplitN(target, "/", 2)[0]); len(repos) != 0 {
			t.Errorf("%s pushed into %s: %v", cmd, target, repos)
		}
	}
	if row.target != "" && (cmd == "copy" || cmd == "import") {
		if tags := f.lockTags(t, row.target); strings.Join(tags, ",") != row.heldTags {
			t.Errorf("%s changed the tags at the target: %v, had %s", cmd, tags, row.heldTags)
		}
	}
}

// accepts runs cmd again with the row's accept flags: it succeeds, and the
// warning is on record in -o json (and the receipt, for copy and import).
func (f *refusalFixture) accepts(t *testing.T, row refusalRow, cmd string) {
	out := filepath.Join(t.TempDir(), "out")
	target := f.freshTarget(t)
	args := append(f.args(row, cmd, target, out), row.accept...)
	if row.held == nil && row.target != "" && cmd != "copy" && cmd != "import" {
		// Only read (policy --keep-previous): the row's own target serves.
		target = row.target
		args = append(f.args(row, cmd, target, out), row.accept...)
	}
	if row.held != nil {
		target = f.copyOfHeld(t, row.held)
		args = append(f.args(row, cmd, target, out), row.accept...)
		if cmd == "copy" || cmd == "import" {
			args = append(args, row.acceptAtTarget...)
		}
	}
	json := cmd != "values" && cmd != "policy" && cmd != "review"
	if json {
		args = append(args, "-o", "json")
	}
	receipt := filepath.Join(t.TempDir(), "receipt.json")
	if cmd == "copy" || cmd == "import" {
		args = append(args, "--receipt", receipt)
	}
	code, stdout, stderr := runCLI(t, args...)
	if code != cli.ExitOK {
		t.Fatalf("with %v: exit %d\n%s", row.accept, code, stderr)
	}
	if json && !strings.Contains(stdout, row.recorded) {
		t.Errorf("with %v, -o json does not record %q:\n%s", row.accept, row.recorded, stdout)
	}
	if cmd == "copy" || cmd == "import" {
		if b, err := os.ReadFile(receipt); err != nil || !strings.Contains(string(b), row.recorded) {
			t.Errorf("the receipt does not record %q: %v\n%s", row.recorded, err, b)
		}
	}
	if !json && !strings.Contains(stderr, "warning: ") {
		t.Errorf("with %v, %s warns of nothing:\n%s", row.accept, cmd, stderr)
	}
}

// args are cmd's arguments for the row's release.
func (f *refusalFixture) args(row refusalRow, cmd, target, out string) []string {
	var src []string
	switch {
	case cmd == "import":
		src = []string{"-f", row.archive}
	case row.lockRef != "":
		src = []string{"--lock-ref", row.lockRef}
	default:
		src = []string{"--lock", row.lockFile}
	}
	args := append([]string{cmd}, src...)
	switch cmd {
	case "copy", "import", "plan":
		args = append(args, "--target", target)
	case "values", "policy":
		args = append(args, "--target", target)
		if cmd == "policy" {
			args = append(args, "--format", "vap")
		}
	case "export":
		args = append(args, "--to", out)
	case "review":
		args = append(args, "--out", out, "--licence-policy", "../../review/licence-policy.yaml")
	}
	args = append(args, row.extra...)
	return append(args, f.trust...)
}

func (f *refusalFixture) lockTags(t *testing.T, target string) []string {
	t.Helper()
	repo, err := name.NewRepository(target+"/reloader-release", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	tags, err := remote.List(repo)
	if err != nil {
		t.Fatalf("listing the tags of %s: %v", repo, err)
	}
	return tags
}

func (f *refusalFixture) freshTarget(t *testing.T) string {
	return startRegistry(t).Host + "/platform/reloader"
}

// copyOfHeld is a fresh target holding what the shared one holds, for a
// run that is allowed to push.
func (f *refusalFixture) copyOfHeld(t *testing.T, held *releasetest.Release) string {
	t.Helper()
	target := f.freshTarget(t)
	if code, _, errs := runCLI(t, append([]string{"copy", "--lock-ref", held.LockRef, "--target", target}, f.trust...)...); code != cli.ExitOK {
		t.Fatalf("copy %s: exit %d: %s", held.Lock.Version, code, errs)
	}
	return target
}

// startDistribution is a CNCF distribution registry for the fixture's
// releases, as users run one.
func startDistribution(t *testing.T) *testregistry.Registry {
	t.Helper()
	r, err := testregistry.StartDistribution(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	return r
}

func day(d int) string { return time.Now().UTC().AddDate(0, 0, d).Format(time.DateOnly) }

func writeTable(t *testing.T, rows ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "support.yaml")
	yaml := "apiVersion: reloader.dev/support/v1\nseries:\n"
	for _, r := range rows {
		yaml += "  - " + r + "\n"
	}
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

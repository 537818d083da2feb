package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/review"
)

// scanCommands are the commands that apply the consumer's scan policy:
// every one but review, which reports the scan as it stands today instead
// of refusing to look at the release (judgmentFlags.reviewing). The scan rows
// hold review to that report (refusalRow.reviewShows).
var scanCommands = []string{"plan", "copy", "export", "import", "verify", "values", "policy"}

// scanRows are the scan rules' rows, on base (a release of the real
// pipeline) whose lock records a scan as the pipeline writes one, signed by
// s, the release's signer: a scan record is part of what the signer vouched
// for, so only the signer can make one, and the verifier checks the record
// exactly as it checks a record Trivy made (scancheck_test.go makes those;
// a Trivy run per rule would add minutes for nothing the check reads). Each
// lock is published alone, in a CNCF distribution registry of its own, as
// its release's source.
//
// later, a newer release of the same signer, is given to policy beside
// them: --keep-previous admits only what the same rules admit.
func (f *refusalFixture) scanRows(t *testing.T, ctx context.Context, s releasetest.Signer, base, later *releasetest.Release) []refusalRow {
	t.Helper()
	now := time.Now().UTC()
	finding := map[string]any{"id": "CVE-2099-2201", "package": scannedModule, "severity": "HIGH"}
	record := func(built time.Time, exceptions ...map[string]any) map[string]any {
		return map[string]any{"scanner": "trivy", "scannerVersion": "0.74.0", "dbDigest": "sha256:" + strings.Repeat("5c", 32),
			"dbBuilt": built.Format(time.RFC3339), "counts": map[string]int{"HIGH": 1}, "findings": []any{finding}, "exceptions": exceptions}
	}
	publish := func(scan map[string]any) string { return f.withScan(t, ctx, s, base, scan) }
	// hold is a target holding the release of each lock, copied at the time
	// given: in order, as a target is kept up to date.
	hold := func(at []time.Time, lockRefs ...string) string {
		t.Helper()
		target := f.freshTarget(t)
		for i, ref := range lockRefs {
			if code, _, errs := runCLIAt(t, at[i], append([]string{"copy", "--lock-ref", ref, "--target", target}, f.trust...)...); code != cli.ExitOK {
				t.Fatalf("copy %s: exit %d: %s", ref, code, errs)
			}
		}
		return target
	}
	// export writes the archive import reads, judged at the time given: the
	// connected side carried the release across while its scan held.
	export := func(lockRef string, at time.Time) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), "release.tar")
		if code, _, errs := runCLIAt(t, at, append([]string{"export", "--lock-ref", lockRef, "--to", p}, f.trust...)...); code != cli.ExitOK {
			t.Fatalf("export %s at %s: exit %d: %s", lockRef, at, code, errs)
		}
		return p
	}

	// A database forty days old: the user's --max-scan-age 30d refuses it.
	// Without a limit of their own, the default one only warns, and that
	// is the acceptance: a limit they never chose must not block them.
	built := now.AddDate(0, 0, -40).Truncate(time.Hour)
	stale := publish(record(built))
	// A risk the release accepted until yesterday (00:00 UTC), with a
	// database four days old: --accept-expired-exception ID, which the
	// refusal names, accepts it on record.
	expires := day(-1)
	expired := publish(record(now.AddDate(0, 0, -4), map[string]any{"id": "CVE-2099-2201", "package": scannedModule,
		"expires": expires, "justification": "the affected client path is never used by the controller", "kind": "accepted_risk"}))
	// The newer release, its database a day old, given to policy where the
	// target holds each of those as the release before it.
	given := f.withScan(t, ctx, s, later, record(now.AddDate(0, 0, -1)))
	keep := []string{"--keep-previous", "1"}
	return []refusalRow{
		{rule: "an extra release whose scan is too old", lockRef: given, target: hold([]time.Time{now, now}, stale, given), commands: []string{"policy"},
			extra: keep, refuseWith: []string{"--max-scan-age", "30d"},
			says:   []string{"--keep-previous", "previous release", base.Lock.Version, "older than the 30d0h allowed"},
			accept: []string{}},
		{rule: "an extra release whose exception has expired", lockRef: given, target: hold([]time.Time{now.AddDate(0, 0, -3), now}, expired, given),
			commands: []string{"policy"}, extra: keep,
			says:   []string{"--keep-previous", "previous release", base.Lock.Version, "exception CVE-2099-2201 in " + scannedModule + " expired " + expires, "--accept-expired-exception CVE-2099-2201"},
			accept: []string{"--accept-expired-exception", "CVE-2099-2201"}},
		{rule: "scan too old", lockRef: stale, archive: export(stale, now), commands: scanCommands,
			refuseWith: []string{"--max-scan-age", "30d"},
			says:       []string{"release " + base.Lock.Version, "the scan's vulnerability database was built " + built.Format(time.RFC3339), "older than the 30d0h allowed (--max-scan-age)"},
			// accept is the same run without the user's limit.
			accept: []string{}, recorded: "older than the 30d0h allowed (a warning: give --max-scan-age to refuse it)",
			reviewShows: []string{"built " + built.Format("2006-01-02 15:04 UTC")}},
		{rule: "an expired exception", lockRef: expired, archive: export(expired, now.AddDate(0, 0, -3)), commands: scanCommands,
			says:   []string{"release " + base.Lock.Version, "exception CVE-2099-2201 in " + scannedModule + " expired " + expires, "--accept-expired-exception CVE-2099-2201"},
			accept: []string{"--accept-expired-exception", "CVE-2099-2201"}, recorded: "accepted by --accept-expired-exception CVE-2099-2201",
			reviewShows: []string{"CVE-2099-2201", "until " + expires + " (EXPIRED)"}, reviewFailOn: "vulnerability: 1 exceptions have expired"},
	}
}

// reviewReports runs review where the other commands refuse, with the same
// flags: review writes the report and exits 0, and the report shows what
// the rule refuses; with --fail-on vulnerability, where the row says so,
// the user's own gate refuses it (exit 3, after writing the review).
func (f *refusalFixture) reviewReports(t *testing.T, row refusalRow) {
	out := filepath.Join(t.TempDir(), "out")
	args := append(f.args(row, "review", f.freshTarget(t), out), row.refuseWith...)
	code, _, stderr := runCLI(t, args...)
	if code != cli.ExitOK {
		t.Fatalf("%s: exit %d, want %d: review reports the scan, it does not judge it\n%s", strings.Join(args, " "), code, cli.ExitOK, stderr)
	}
	md, err := os.ReadFile(filepath.Join(out, review.FileMD))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range row.reviewShows {
		if !strings.Contains(string(md), s) {
			t.Errorf("the review does not show %q:\n%s", s, md)
		}
	}
	if row.reviewFailOn == "" {
		return
	}
	out = filepath.Join(t.TempDir(), "gated")
	args = append(f.args(row, "review", f.freshTarget(t), out), "--fail-on", "vulnerability")
	code, _, stderr = runCLI(t, args...)
	if code != cli.ExitRefused || !strings.Contains(stderr, row.reviewFailOn) {
		t.Errorf("review --fail-on vulnerability: exit %d, want %d naming %q\n%s", code, cli.ExitRefused, row.reviewFailOn, stderr)
	}
}

// withScan is rel's lock recording scan, signed by s and published alone in
// a CNCF distribution registry of its own; its reference.
func (f *refusalFixture) withScan(t *testing.T, ctx context.Context, s releasetest.Signer, rel *releasetest.Release, scan map[string]any) string {
	t.Helper()
	lockJSON, bundle := rewriteLock(t, ctx, s, rel, func(l map[string]any) { l["scan"] = scan })
	ref := startDistribution(t).Host + "/reloader-release:" + rel.Lock.Version
	if err := releasetest.PushLock(ctx, ref, lockJSON, bundle); err != nil {
		t.Fatal(err)
	}
	return ref
}

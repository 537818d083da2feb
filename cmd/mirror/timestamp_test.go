package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/review"
	"github.com/reloader-dev/reloader/test/virtualsigstore"
)

// writeRootOf writes s's trusted root with only the time sources p keeps.
func writeRootOf(t *testing.T, s releasetest.Signer, p virtualsigstore.Parts, path string) string {
	t.Helper()
	b, err := s.TrustedRootJSONOf(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// verifiedTimeSource runs verify -o json and returns the lock's time source.
func verifiedTimeSource(t *testing.T, args ...string) string {
	t.Helper()
	code, stdout, stderr := runCLI(t, append([]string{"verify", "-o", "json"}, args...)...)
	if code != cli.ExitOK {
		t.Fatalf("verify: exit %d: %s", code, stderr)
	}
	var res struct {
		Lock struct {
			TimeSource string `json:"timeSource"`
		} `json:"lock"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("verify -o json: %v\n%s", err, stdout)
	}
	return res.Lock.TimeSource
}

// A keyless release signed without a transparency log, its signatures
// carrying only RFC 3161 timestamps from the test Sigstore's TSA (no Rekor
// v1 entry), verifies when the trusted root lists that TSA and no log, and
// verify -o json and the review say the timestamp was the time source. A
// root that lists no TSA leaves it without a time source: exit 3, naming
// it, even with the log waived.
func TestAKeylessReleaseWithOnlyATimestampVerifiesWhenTheTrustedRootCarriesTheTSA(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, _ := virtualSigstore(t, dir, "full-root.json")
	rel, err := releasetest.Publish(context.Background(), releasetest.Options{Registry: startRegistry(t).Host, Signer: s, Seed: 41})
	if err != nil {
		t.Fatal(err)
	}
	tsaRoot := writeRootOf(t, s, virtualsigstore.Parts{NoLogs: true}, filepath.Join(dir, "tsa-root.json"))
	bareRoot := writeRootOf(t, s, virtualsigstore.Parts{NoLogs: true, NoTSA: true}, filepath.Join(dir, "bare-root.json"))
	id := []string{"--lock-ref", rel.LockRef, "--allow-unscanned", "--certificate-identity", workflowIdentity, "--certificate-oidc-issuer", githubIssuer, "--insecure-ignore-sct"}

	if got := verifiedTimeSource(t, append(id, "--trusted-root", tsaRoot)...); got != "rfc3161-timestamp" {
		t.Errorf("verify -o json: timeSource %q, want rfc3161-timestamp", got)
	}
	for _, extra := range [][]string{nil, {"--insecure-ignore-tlog"}} {
		code, _, stderr := runCLI(t, append(append([]string{"verify", "--trusted-root", bareRoot}, id...), extra...)...)
		if code != cli.ExitRefused || !strings.Contains(stderr, "no verified time source") || !strings.Contains(stderr, "no timestamp authority") {
			t.Errorf("verify %v under a root without the TSA: exit %d, want %d naming the missing time source: %s", extra, code, cli.ExitRefused, stderr)
		}
	}

	out := filepath.Join(dir, "review")
	code, stdout, stderr := runCLI(t, append([]string{"review", "--trusted-root", tsaRoot, "--licence-policy", "../../review/licence-policy.yaml", "--out", out, "-o", "json"}, id...)...)
	if code != cli.ExitOK {
		t.Fatalf("review: exit %d: %s", code, stderr)
	}
	var rv struct {
		Review *review.Review `json:"review"`
	}
	if err := json.Unmarshal([]byte(stdout), &rv); err != nil || rv.Review == nil || rv.Review.Release.TimeSource != "rfc3161-timestamp" {
		t.Fatalf("review -o json: %v, release %+v", err, rv.Review)
	}
	page, err := os.ReadFile(filepath.Join(out, review.FileHTML))
	if err != nil || !strings.Contains(string(page), `id="time-source"><code>rfc3161-timestamp</code>`) {
		t.Fatalf("the review page names no time source (%v)", err)
	}
}

// A release recorded in the log as well is timed by both, and says so.
func TestAKeylessReleaseInTheLogNamesBothTimeSources(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, root := virtualSigstore(t, dir, "root.json")
	s.Tlog = true
	rel, err := releasetest.Publish(context.Background(), releasetest.Options{Registry: startRegistry(t).Host, Signer: s, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	got := verifiedTimeSource(t, "--lock-ref", rel.LockRef, "--trusted-root", root, "--allow-unscanned",
		"--certificate-identity", workflowIdentity, "--certificate-oidc-issuer", githubIssuer, "--insecure-ignore-sct")
	if got != "rfc3161-timestamp+tlog-integrated-time" {
		t.Fatalf("verify -o json: timeSource %q, want rfc3161-timestamp+tlog-integrated-time", got)
	}
}

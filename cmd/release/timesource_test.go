package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release/trust"
	testregistry "github.com/reloader-dev/reloader/test/registry"
	"github.com/reloader-dev/reloader/test/tools"
	"github.com/reloader-dev/reloader/test/virtualsigstore"
)

const (
	releaseWorkflow = "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3"
	actionsIssuer   = "https://token.actions.githubusercontent.com"
)

// verifyWith runs verify with f preset, as execute runs the whole CLI.
func verifyWith(f *verifyFlags, args ...string) (int, string, string) {
	c := newVerifyCmdWith(f)
	var out, errOut bytes.Buffer
	c.SetOut(&out)
	c.SetErr(&errOut)
	c.SetArgs(args)
	code := cli.Report("reloader-release", c.ExecuteContext(context.Background()), &errOut)
	return code, out.String(), errOut.String()
}

// lockTimeSource is what verify -o json says of the lock: verified, and
// lock.timeSource ("" when absent).
func lockTimeSource(t *testing.T, stdout string) (verified bool, timeSource string) {
	t.Helper()
	var res struct {
		Verified bool `json:"verified"`
		Lock     struct {
			Digest     string  `json:"digest"`
			TimeSource *string `json:"timeSource"`
		} `json:"lock"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Lock.Digest == "" {
		t.Fatalf("verify -o json names no verified lock (%v):\n%s", err, stdout)
	}
	if res.Lock.TimeSource == nil {
		return res.Verified, ""
	}
	if *res.Lock.TimeSource == "" {
		t.Fatalf("verify -o json: lock.timeSource is present and empty:\n%s", stdout)
	}
	return res.Verified, *res.Lock.TimeSource
}

// writeRelease writes the release's lock and its bundle into dir, as a user
// downloads them, and returns the lock's path.
func writeRelease(t *testing.T, dir string, rel *releasetest.Release) string {
	t.Helper()
	lock := filepath.Join(dir, "reloader-release.json")
	for p, b := range map[string][]byte{lock: rel.LockJSON, lock + ".sigstore.json": rel.LockBundle} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return lock
}

// A keyless release whose signatures carry only an RFC 3161 timestamp from
// the test Sigstore's TSA (no Rekor v1 entry) verifies under a trusted root
// that lists the TSA and no log, and verify -o json says the timestamp was
// the time source, as reloader-mirror verify does. Under a root that lists
// a log the entry stays required: exit 3, naming it.
//
// The test CA logs to no certificate transparency log; reloader-release
// has no flag to waive the SCT (it verifies public Sigstore's releases),
// so the test presets the policy field reloader-mirror's
// --insecure-ignore-sct sets.
func TestVerifyNamesTheTimestampAuthorityAsTheTimeSourceOfATimestampedKeylessRelease(t *testing.T) {
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	reg := testregistry.InProcess(t)
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	s, err := releasetest.NewKeylessSigner(vs, releaseWorkflow, actionsIssuer)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: reg.Host, Signer: s, Seed: 51})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lock := writeRelease(t, dir, rel)
	roots := map[string]virtualsigstore.Parts{"tsa-root.json": {NoLogs: true}, "full-root.json": {}}
	for name, parts := range roots {
		b, err := s.TrustedRootJSONOf(parts)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := func(root string) []string {
		return []string{"--lock", lock, "--trusted-root", filepath.Join(dir, root),
			"--certificate-identity", releaseWorkflow, "--certificate-oidc-issuer", actionsIssuer, "-o", "json"}
	}
	noSCT := func() *verifyFlags { return &verifyFlags{trust: cli.TrustFlags{IgnoreSCT: true}} }

	code, stdout, stderr := verifyWith(noSCT(), args("tsa-root.json")...)
	if code != cli.ExitOK {
		t.Fatalf("verify under the TSA-only root: exit %d: %s", code, stderr)
	}
	if ok, ts := lockTimeSource(t, stdout); !ok || ts != trust.TimeSourceTimestamp {
		t.Errorf("verify -o json: verified %v, lock.timeSource %q; want %q", ok, ts, trust.TimeSourceTimestamp)
	}

	code, _, stderr = verifyWith(noSCT(), args("full-root.json")...)
	if code != cli.ExitRefused || !strings.Contains(stderr, "no transparency log entry") {
		t.Errorf("verify under a root that lists a log: exit %d, want %d naming the missing entry: %s", code, cli.ExitRefused, stderr)
	}
}

// A key-signed release needs no time source (the key is the anchor, and it
// has no certificate whose validity to time): verify -o json reports the
// verified lock with no lock.timeSource.
func TestVerifyNamesNoTimeSourceForAKeySignedRelease(t *testing.T) {
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	reg := testregistry.InProcess(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: reg.Host, Signer: s, Seed: 52})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lock := writeRelease(t, dir, rel)
	key := filepath.Join(dir, "cosign.pub")
	if err := os.WriteFile(key, s.PublicKeyPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := execute("verify", "--lock", lock, "--key", key, "-o", "json")
	if code != cli.ExitOK {
		t.Fatalf("verify: exit %d: %s", code, stderr)
	}
	if ok, ts := lockTimeSource(t, stdout); !ok || ts != "" {
		t.Errorf("verify -o json of a key release: verified %v, lock.timeSource %q; want it verified with none", ok, ts)
	}
}

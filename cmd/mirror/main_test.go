package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
	testregistry "github.com/reloader-dev/reloader/test/registry"
)

func startRegistry(t *testing.T) *testregistry.Registry {
	t.Helper()
	r, err := testregistry.StartInProcess(testregistry.InProcessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		remote.DefaultTransport.(*http.Transport).CloseIdleConnections()
		_ = r.Stop()
	})
	return r
}

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// The whole story through the CLI: plan, copy, verify at the target, values,
// export and import through an archive, with the documented exit codes.
func TestCLIStory(t *testing.T) {
	t.Parallel()
	rel, _, key, lock := keySignedRelease(t, context.Background(), startRegistry(t), 3)
	dir := t.TempDir()
	dst := startRegistry(t)
	target := dst.Host + "/platform/reloader"

	code, out, errs := runCLI(t, "plan", "--lock-ref", rel.LockRef, "--key", key, "--allow-unscanned", "--allow-no-provenance", "--target", target, "-o", "json")
	if code != cli.ExitOK {
		t.Fatalf("plan: exit %d: %s", code, errs)
	}
	var plan struct {
		BytesToMove int64 `json:"bytesToMove"`
		Trust       struct{ Mode string }
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil || plan.BytesToMove == 0 || plan.Trust.Mode != "key" {
		t.Fatalf("plan output %v: %s", err, out)
	}

	receipt := filepath.Join(dir, "receipt.json")
	code, out, errs = runCLI(t, "copy", "--lock", lock, "--key", key, "--allow-unscanned", "--allow-no-provenance", "--target", target, "--receipt", receipt, "-o", "json")
	if code != cli.ExitOK {
		t.Fatalf("copy: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(receipt); err != nil {
		t.Fatal("no receipt written")
	}
	if !strings.Contains(out, target+"/reloader@"+rel.Indexes["reloader"]) {
		t.Errorf("receipt does not map the index to the target: %s", out)
	}

	code, out, errs = runCLI(t, "verify", "--lock-ref", target+"/reloader-release:v1.2.3", "--key", key, "--allow-unscanned", "--allow-no-provenance", "--target", target)
	if code != cli.ExitOK {
		t.Fatalf("verify at target: exit %d: %s %s", code, out, errs)
	}

	code, out, errs = runCLI(t, "values", "--lock", lock, "--key", key, "--allow-unscanned", "--allow-no-provenance", "--target", target, "--check-chart")
	if code != cli.ExitOK {
		t.Fatalf("values: exit %d: %s", code, errs)
	}
	for _, want := range []string{"repository: " + target + "/reloader\n", "digest: " + rel.Indexes["reloader"], "oci://" + target + "/charts/reloader@" + rel.Chart} {
		if !strings.Contains(out, want) {
			t.Errorf("values output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI(t, "values", "--lock", lock, "--key", key, "--allow-unscanned", "--allow-no-provenance", "--target", target, "-o", "json")
	if code != cli.ExitOK || !strings.Contains(out, rel.Indexes["reloader-ubi"]) {
		t.Errorf("values json lacks the ubi variant: %s", out)
	}

	archive := filepath.Join(dir, "release.tar.zst")
	if code, _, errs = runCLI(t, "export", "--lock", lock, "--key", key, "--allow-unscanned", "--allow-no-provenance", "--to", archive); code != cli.ExitOK {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	air := startRegistry(t)
	if code, _, errs = runCLI(t, "import", "-f", archive, "--key", key, "--allow-unscanned", "--allow-no-provenance", "--target", air.Host+"/airgap"); code != cli.ExitOK {
		t.Fatalf("import: exit %d: %s", code, errs)
	}

	other, _ := releasetest.NewKeySigner(t.TempDir())
	otherKey := filepath.Join(dir, "other.pub")
	_ = os.WriteFile(otherKey, other.PublicKeyPEM(), 0o644)
	if code, _, errs = runCLI(t, "import", "-f", archive, "--key", otherKey, "--target", air.Host+"/evil"); code != cli.ExitRefused {
		t.Errorf("import with the wrong key: exit %d, want %d: %s", code, cli.ExitRefused, errs)
	}
	// the test release's lock records no vulnerability scan: refused by default.
	if code, _, errs = runCLI(t, "copy", "--lock", lock, "--key", key, "--target", dst.Host+"/unscanned"); code != cli.ExitRefused || !strings.Contains(errs, "not scanned") {
		t.Errorf("copy of an unscanned release without --allow-unscanned: exit %d, want %d: %s", code, cli.ExitRefused, errs)
	}
	if code, _, _ = runCLI(t, "copy", "--lock", lock, "--target", target); code != cli.ExitUsage {
		t.Errorf("copy without a trust policy: exit %d, want %d", code, cli.ExitUsage)
	}
	if code, _, _ = runCLI(t, "copy", "--bogus"); code != cli.ExitUsage {
		t.Errorf("unknown flag: exit %d, want %d", code, cli.ExitUsage)
	}
}

// A release path that is not there is a mistake in what the user typed
// (exit 2, naming the path), not a failure to run and not a refusal.
func TestAMissingArchiveOrLockIsAUsageError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "reloader-v9.9.9.tar.zst")
	for _, args := range [][]string{
		{"verify", "-f", missing, "--key", "cosign.pub"},
		{"import", "-f", missing, "--key", "cosign.pub", "--target", "harbor.corp.example/p"},
		{"verify", "--lock", filepath.Join(dir, "reloader-release.json"), "--key", "cosign.pub"},
	} {
		code, _, errs := runCLI(t, args...)
		if code != cli.ExitUsage || !strings.Contains(errs, dir) {
			t.Errorf("%v: exit %d, want %d naming the path: %s", args, code, cli.ExitUsage, errs)
		}
	}
}

func TestHelpTeachesByExample(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"plan", "copy", "export", "import", "verify", "values", "policy check"} {
		code, out, _ := runCLI(t, append(strings.Fields(c), "--help")...)
		if code != cli.ExitOK || !strings.Contains(out, "reloader-mirror "+c) || !strings.Contains(out, "--output") {
			t.Errorf("%s --help: exit %d, lacks an example or --output:\n%s", c, code, out)
		}
	}
}

// keySignedRelease publishes a key-signed release (seed picks its digests)
// into src and writes what a user is handed beside it into a fresh
// directory: the public key and the lock with its signature bundle.
func keySignedRelease(t *testing.T, ctx context.Context, src *testregistry.Registry, seed uint64) (rel *releasetest.Release, s releasetest.Signer, key, lock string) {
	t.Helper()
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if rel, err = releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: seed}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key, lock = filepath.Join(dir, "cosign.pub"), filepath.Join(dir, "reloader-release.json")
	for p, b := range map[string][]byte{key: s.PublicKeyPEM(), lock: rel.LockJSON, lock + ".sigstore.json": rel.LockBundle} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return rel, s, key, lock
}

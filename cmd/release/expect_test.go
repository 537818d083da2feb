package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
	testregistry "github.com/reloader-dev/reloader/test/registry"

	"github.com/reloader-dev/reloader/test/tools"
)

// reloader-release verify holds a real release to the version the user
// expects, after the lock's signature verified: a genuine v1.0.0 lock handed
// over as v1.3.0 exits 3 naming both. rebuild refuses it too.
func TestVerifyRefusesAGenuineLockOfAnotherVersionThanExpected(t *testing.T) {
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	reg := testregistry.InProcess(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: reg.Host, Signer: s, Version: "v1.0.0", Seed: 21})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key, lock := filepath.Join(dir, "cosign.pub"), filepath.Join(dir, "reloader-release.json")
	for p, b := range map[string][]byte{key: s.PublicKeyPEM(), lock: rel.LockJSON, lock + ".sigstore.json": rel.LockBundle} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const named = "the release is v1.0.0, but v1.3.0 was expected"
	if code, out := run(t, "verify", "--lock", lock, "--key", key, "--expect-version", "v1.3.0"); code != cli.ExitRefused || !strings.Contains(out, named) {
		t.Errorf("verify --expect-version v1.3.0 of the v1.0.0 lock: exit %d, want %d naming both:\n%s", code, cli.ExitRefused, out)
	}
	if code, out := run(t, "rebuild", "--lock", lock, "--key", key, "--source", dir, "--out", filepath.Join(dir, "rebuild"), "--expect-version", "v1.3.0"); code != cli.ExitRefused || !strings.Contains(out, named) {
		t.Errorf("rebuild --expect-version v1.3.0 of the v1.0.0 lock: exit %d, want %d naming both:\n%s", code, cli.ExitRefused, out)
	}
	if code, out := run(t, "verify", "--lock", lock, "--key", key, "--expect-version", "v1.0.0"); code != cli.ExitOK {
		t.Errorf("verify --expect-version v1.0.0: exit %d:\n%s", code, out)
	}
}

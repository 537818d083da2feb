package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/publish/releasetest"

	"github.com/reloader-dev/reloader/test/tools"
)

// twoReleases publishes v1.0.0 and v1.3.0 with the real pipeline, signed by
// one key, into one registry: what an attacker replays is a genuine older
// release, not a forgery.
func twoReleases(t *testing.T, ctx context.Context) (v1, v2 *releasetest.Release, key string) {
	t.Helper()
	src := startRegistry(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if v1, err = releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Version: "v1.0.0", Seed: 10}); err != nil {
		t.Fatal(err)
	}
	if v2, err = releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Version: "v1.3.0", Seed: 13}); err != nil {
		t.Fatal(err)
	}
	key = filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(key, s.PublicKeyPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	return v1, v2, key
}

// A signature says only that the signer made a lock at some time. Re-pointing
// the v1.3.0 tag at the genuine, signed v1.0.0 lock must not pass for v1.3.0
// in any command that takes a release, and nothing may reach the target.
func TestATagRepointedToAnOlderLockIsRefusedByEveryCommand(t *testing.T) {
	t.Parallel()
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	v1, v2, key := twoReleases(t, ctx)
	dir := t.TempDir()
	// Before the attack: the v1.0.0 archive, for import with an expected version.
	v1Archive := filepath.Join(dir, "v1.tar")
	trust := []string{"--key", key, "--allow-unscanned", "--allow-no-provenance"}
	if code, _, errs := runCLI(t, append([]string{"export", "--lock-ref", v1.LockRef, "--to", v1Archive}, trust...)...); code != cli.ExitOK {
		t.Fatalf("export v1.0.0: exit %d: %s", code, errs)
	}
	if err := releasetest.PushLock(ctx, v2.LockRef, v1.LockJSON, v1.LockBundle); err != nil {
		t.Fatal(err)
	}
	dst, writes := writeCounter(t)
	target := dst.Host + "/platform/reloader"
	const named = "the tag v1.3.0 holds the lock of v1.0.0"
	for name, args := range map[string][]string{
		"verify": {"verify", "--lock-ref", v2.LockRef},
		"plan":   {"plan", "--lock-ref", v2.LockRef, "--target", target},
		"copy":   {"copy", "--lock-ref", v2.LockRef, "--target", target},
		"export": {"export", "--lock-ref", v2.LockRef, "--to", filepath.Join(dir, "replayed.tar")},
		"values": {"values", "--lock-ref", v2.LockRef, "--target", target},
		"policy": {"policy", "--lock-ref", v2.LockRef, "--target", target},
	} {
		code, _, errs := runCLI(t, append(args, trust...)...)
		if code != cli.ExitRefused || !strings.Contains(errs, named) {
			t.Errorf("%s of a re-pointed tag: exit %d, want %d naming both versions (%q): %s", name, code, cli.ExitRefused, named, errs)
		}
	}
	// An archive carries no tag: the user says which version they expect.
	code, _, errs := runCLI(t, append([]string{"import", "-f", v1Archive, "--expect-version", "v1.3.0", "--target", target}, trust...)...)
	if code != cli.ExitRefused || !strings.Contains(errs, "the release is v1.0.0, but v1.3.0 was expected") {
		t.Errorf("import of the v1.0.0 archive expecting v1.3.0: exit %d, want %d naming both: %s", code, cli.ExitRefused, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "replayed.tar")); err == nil {
		t.Error("export of a re-pointed tag wrote an archive")
	}
	if n := writes.Load(); n != 0 {
		t.Errorf("%d write requests reached the target; a refused release must push nothing", n)
	}
	// The genuine lock by its own tag, and by the expected version, passes.
	if code, _, errs := runCLI(t, append([]string{"verify", "--lock-ref", v1.LockRef, "--expect-version", "v1.0.0"}, trust...)...); code != cli.ExitOK {
		t.Errorf("verify of v1.0.0 by its own tag: exit %d: %s", code, errs)
	}
}

// An older archive imported after a newer one is refused before anything is
// pushed; --allow-downgrade lets it through and the receipt says so; the same
// release again stays a no-op.
func TestAnOlderArchiveImportedAfterANewerOneIsRefusedUnlessAllowed(t *testing.T) {
	t.Parallel()
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	v1, v2, key := twoReleases(t, ctx)
	dir := t.TempDir()
	trust := []string{"--key", key, "--allow-unscanned", "--allow-no-provenance"}
	archives := map[string]string{}
	for v, rel := range map[string]*releasetest.Release{"v1.0.0": v1, "v1.3.0": v2} {
		archives[v] = filepath.Join(dir, v+".tar")
		if code, _, errs := runCLI(t, append([]string{"export", "--lock-ref", rel.LockRef, "--to", archives[v]}, trust...)...); code != cli.ExitOK {
			t.Fatalf("export %s: exit %d: %s", v, code, errs)
		}
	}
	dst, writes := writeCounter(t)
	target := dst.Host + "/airgap/reloader"
	imp := func(archive string, extra ...string) (int, string) {
		code, _, errs := runCLI(t, append(append([]string{"import", "-f", archive, "--target", target}, trust...), extra...)...)
		return code, errs
	}
	if code, errs := imp(archives["v1.3.0"]); code != cli.ExitOK {
		t.Fatalf("import v1.3.0: exit %d: %s", code, errs)
	}
	before := writes.Load()
	code, errs := imp(archives["v1.0.0"])
	if code != cli.ExitRefused || !strings.Contains(errs, "release v1.0.0 is older than v1.3.0") {
		t.Fatalf("import of v1.0.0 after v1.3.0: exit %d, want %d naming both: %s", code, cli.ExitRefused, errs)
	}
	if n := writes.Load() - before; n != 0 {
		t.Errorf("the refused downgrade sent %d write requests to the target", n)
	}
	receipt := filepath.Join(dir, "receipt.json")
	if code, errs := imp(archives["v1.0.0"], "--allow-downgrade", "--receipt", receipt); code != cli.ExitOK {
		t.Fatalf("import of v1.0.0 with --allow-downgrade: exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(receipt)
	if err != nil {
		t.Fatal(err)
	}
	var rc mirror.Receipt
	if err := json.Unmarshal(b, &rc); err != nil {
		t.Fatal(err)
	}
	if rc.Downgrade == nil || rc.Downgrade.Version != "v1.0.0" || rc.Downgrade.NewestAtTarget != "v1.3.0" {
		t.Errorf("the receipt of an allowed downgrade records %+v, want v1.0.0 over v1.3.0:\n%s", rc.Downgrade, b)
	}
	if code, errs := imp(archives["v1.3.0"], "--receipt", receipt); code != cli.ExitOK {
		t.Fatalf("import of v1.3.0 again: exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(receipt); strings.Contains(string(b), `"downgrade"`) {
		t.Errorf("the receipt of a normal import records a downgrade:\n%s", b)
	}
}

// Each command's --help states the rules a user of it relies on: the
// version binding everywhere, the downgrade refusal where it pushes, and
// that the identity regexp is anchored.
func TestEveryCommandsHelpStatesTheVersionAndDowngradeRules(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"plan", "copy", "export", "import", "verify", "values", "policy", "review"} {
		code, out, _ := runCLI(t, c, "--help")
		if code != cli.ExitOK {
			t.Fatalf("%s --help: exit %d", c, code)
		}
		for _, want := range []string{"--expect-version v1.2.3 requires exactly that version", "must be that version", "anchored: ^(?:EXPR)$"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s --help lacks %q", c, want)
			}
		}
		pushes := c == "copy" || c == "import"
		if got := strings.Contains(out, "refused (exit 3, naming both) unless --allow-downgrade"); got != pushes {
			t.Errorf("%s --help states the downgrade rule: %v, want %v", c, got, pushes)
		}
	}
}

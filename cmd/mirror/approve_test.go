package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
)

// policy --keep-previous N approves the N releases before this one that
// the target holds, read and verified there; without it only this
// release's digests are approved, and asking for more releases than the
// target holds is an error, not a silently shorter list.
func TestPolicyKeepPreviousApprovesTheReleasesAtTheTarget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, dst := startRegistry(t), startRegistry(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(t.TempDir(), "cosign.pub")
	if err := os.WriteFile(key, s.PublicKeyPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	target := dst.Host + "/platform/reloader"
	trust := []string{"--key", key, "--allow-unscanned", "--allow-no-provenance", "--target", target}
	var rels []*releasetest.Release
	for i, version := range []string{"v1.0.0", "v1.1.0"} {
		rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: uint64(51 + i), Version: version})
		if err != nil {
			t.Fatal(err)
		}
		if code, _, errs := runCLI(t, append([]string{"copy", "--lock-ref", rel.LockRef}, trust...)...); code != cli.ExitOK {
			t.Fatalf("copy %s: exit %d: %s", version, code, errs)
		}
		rels = append(rels, rel)
	}
	v1, v2 := rels[0], rels[1]
	lockRef := target + "/reloader-release:v1.1.0"

	code, out, errs := runCLI(t, append([]string{"policy", "--lock-ref", lockRef, "--format", "vap", "--keep-previous", "1"}, trust...)...)
	if code != cli.ExitOK {
		t.Fatalf("policy --keep-previous 1: exit %d: %s", code, errs)
	}
	for _, d := range []string{v1.Indexes["reloader"], v1.Indexes["reloader-ubi"], v2.Indexes["reloader"], v2.Indexes["reloader-ubi"]} {
		if !strings.Contains(out, `"`+d+`"`) {
			t.Errorf("the policy does not approve %s:\n%s", d, out)
		}
	}
	if !strings.Contains(out, "of an approved release: v1.1.0, v1.0.0\n") {
		t.Errorf("the denial message does not name the approved releases:\n%s", out)
	}

	code, out, errs = runCLI(t, append([]string{"policy", "--lock-ref", lockRef, "--format", "vap"}, trust...)...)
	if code != cli.ExitOK || !strings.Contains(out, v2.Indexes["reloader"]) || strings.Contains(out, v1.Indexes["reloader"]) {
		t.Errorf("policy for v1.1.0 alone: exit %d, approves v1.0.0 or not v1.1.0: %s %s", code, errs, out)
	}
	if code, _, errs = runCLI(t, append([]string{"policy", "--lock-ref", lockRef, "--format", "vap", "--keep-previous", "2"}, trust...)...); code != cli.ExitError ||
		!strings.Contains(errs, "holds 1 older than v1.1.0") {
		t.Errorf("--keep-previous 2 with one older release at the target: exit %d: %s", code, errs)
	}
	if code, out, _ = runCLI(t, "policy", "--help"); code != cli.ExitOK || !strings.Contains(out, "--keep-previous") || !strings.Contains(out, "anchored") {
		t.Errorf("policy --help does not teach --keep-previous and anchoring:\n%s", out)
	}
}

package main

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/test/tools"
)

// reloader-mirror built against Go's certified FIPS 140-3 module and run
// with GODEBUG=fips140=only (every non-approved algorithm refused) verifies a
// key-signed release and a keyless one offline: cosign's ECDSA P-256
// signatures over SHA-256, the certificate chains and the transparency
// log's proofs are FIPS-approved end to end. A signature by another key is still
// refused (exit 3): the mode changes which algorithms run, never whether a
// verification may be skipped.
func TestVerifyInFIPS140OnlyMode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds reloader-mirror with GOFIPS140")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "reloader-mirror")
	if err := tools.GoBuildEnv(ctx, []string{"GOFIPS140=certified"}, "./cmd/mirror", bin); err != nil {
		t.Fatal(err)
	}
	if bi, err := buildinfo.ReadFile(bin); err != nil || !slices.ContainsFunc(bi.Settings, func(s debug.BuildSetting) bool {
		return s.Key == "GOFIPS140" && strings.HasPrefix(s.Value, "v1.0.0")
	}) {
		t.Fatalf("the binary does not carry the certified module (GOFIPS140=v1.0.0-…): %v %v", bi, err)
	}
	src := startRegistry(t)
	rel, _, key, _ := keySignedRelease(t, ctx, src, 7)
	other, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	otherKey := filepath.Join(dir, "other.pub")
	if err := os.WriteFile(otherKey, other.PublicKeyPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	verify := func(args ...string) (int, string) {
		cmd := exec.CommandContext(ctx, bin, append([]string{"verify", "--allow-unscanned"}, args...)...)
		cmd.Env = append(os.Environ(), "GODEBUG=fips140=only")
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	keyed := func(key string) []string {
		return []string{"--lock-ref", rel.LockRef, "--key", key, "--allow-no-provenance"}
	}
	if code, out := verify(keyed(key)...); code != 0 || !strings.Contains(out, "verified offline") || strings.Contains(out, "panic") {
		t.Fatalf("verify under fips140=only: exit %d, want 0:\n%s", code, out)
	}
	if code, out := verify(keyed(otherKey)...); code != 3 || strings.Contains(out, "panic") {
		t.Fatalf("verify with another key under fips140=only: exit %d, want 3 (refused):\n%s", code, out)
	}

	// Keyless: Fulcio-style certificate chains, the transparency log's
	// inclusion proofs and signed entry timestamps.
	vs, root := virtualSigstore(t, dir, "trusted_root.json")
	vs.Tlog = true
	keyless, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Prefix: "keyless", Signer: vs, Seed: 8})
	if err != nil {
		t.Fatal(err)
	}
	if code, out := verify("--lock-ref", keyless.LockRef, "--trusted-root", root, "--certificate-identity", workflowIdentity,
		"--certificate-oidc-issuer", githubIssuer, "--insecure-ignore-sct"); code != 0 || strings.Contains(out, "panic") {
		t.Fatalf("keyless verify under fips140=only: exit %d, want 0:\n%s", code, out)
	}
}

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

// policy prints policies for the target the release was mirrored to, after
// verifying the release like every other command.
func TestPolicyCommand(t *testing.T) {
	t.Parallel()
	_, _, key, lock := keySignedRelease(t, context.Background(), startRegistry(t), 5)
	dir := t.TempDir()
	target := "harbor.corp.example/platform/reloader"

	code, out, errs := runCLI(t, "policy", "--lock", lock, "--key", key, "--allow-unscanned", "--target", target)
	if code != cli.ExitOK {
		t.Fatalf("policy: exit %d: %s", code, errs)
	}
	for _, want := range []string{"kind: ValidatingAdmissionPolicy\n", "kind: ClusterImagePolicy\n", "kind: ClusterPolicy\n",
		`'["` + target + `/reloader", "` + target + `/reloader-fips",`, `"` + target + `/reloader-ubi", "` + target + `/reloader-ubi-fips"]`, "glob: " + target + "/reloader@*", "reloader.dev/release: v1.2.3"} {
		if !strings.Contains(out, want) {
			t.Errorf("policy output lacks %q", want)
		}
	}

	pdir := filepath.Join(dir, "policies")
	code, out, errs = runCLI(t, "policy", "--lock", lock, "--key", key, "--allow-unscanned", "--target", target, "--mode", "audit", "--output", pdir, "--format", "all")
	if code != cli.ExitOK {
		t.Fatalf("policy --output: exit %d: %s", code, errs)
	}
	for _, f := range []string{"vap.yaml", "policy-controller.yaml", "kyverno.yaml"} {
		b, err := os.ReadFile(filepath.Join(pdir, f))
		if err != nil {
			t.Fatalf("%s not written: %v (stdout %s)", f, err, out)
		}
		if !strings.Contains(string(b), "Mode: ") || strings.Contains(string(b), "Deny") || strings.Contains(string(b), "Enforce") {
			t.Errorf("%s is not in audit mode:\n%s", f, b)
		}
	}

	code, out, _ = runCLI(t, "policy", "--lock", lock, "--key", key, "--allow-unscanned", "--target", target, "--format", "vap", "--namespace-selector", "reloader.dev/enforce=true")
	if code != cli.ExitOK || !strings.Contains(out, "reloader.dev/enforce: \"true\"") || strings.Contains(out, "ClusterPolicy") {
		t.Errorf("vap with a namespace selector: exit %d:\n%s", code, out)
	}

	other, _ := releasetest.NewKeySigner(t.TempDir())
	otherKey := filepath.Join(dir, "other.pub")
	_ = os.WriteFile(otherKey, other.PublicKeyPEM(), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"wrong key", []string{"--key", otherKey, "--allow-unscanned", "--target", target}, cli.ExitRefused},
		{"bad format", []string{"--key", key, "--allow-unscanned", "--target", target, "--format", "opa"}, cli.ExitUsage},
		{"bad mode", []string{"--key", key, "--allow-unscanned", "--target", target, "--mode", "dryrun"}, cli.ExitUsage},
		{"bad selector", []string{"--key", key, "--target", target, "--namespace-selector", "a in (b"}, cli.ExitUsage},
	} {
		if code, _, errs := runCLI(t, append([]string{"policy", "--lock", lock}, tc.args...)...); code != tc.code {
			t.Errorf("%s: exit %d, want %d: %s", tc.name, code, tc.code, errs)
		}
	}

	if code, _, errs := runCLI(t, "policy", "--lock", lock, "--key", key); code == cli.ExitOK || !strings.Contains(errs, `"target"`) {
		t.Errorf("policy without --target: exit %d: %s", code, errs)
	}

	code, out, _ = runCLI(t, "policy", "--help")
	if code != cli.ExitOK || !strings.Contains(out, "reloader-mirror policy") || !strings.Contains(out, "--output") || !strings.Contains(out, "--mode audit") {
		t.Errorf("policy --help: exit %d:\n%s", code, out)
	}
}

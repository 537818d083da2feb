package test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMakeDemoReloadsADeployment runs the README's first command, `make
// demo`, as a newcomer does, and reads what it promises from its output:
// the Deployment adopted without a rollout, then rolled once its ConfigMap
// changed.
func TestMakeDemoReloadsADeployment(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane and the controller")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-s", "demo")
	cmd.Dir = ".."
	// Run on its own, not as a sub-make of `make test`'s jobserver.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MAKEFLAGS=") && !strings.HasPrefix(kv, "MAKELEVEL=") && !strings.HasPrefix(kv, "MFLAGS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make demo: %v\n%s", err, out)
	}
	for _, want := range []string{"adopted without a rollout", "changing ConfigMap web-config", "rolled in"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make demo did not print %q:\n%s", want, out)
		}
	}
}

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/test/tools"
)

// The release policy is built in: the binary gates reports, and prints the
// policy to start from, in a directory that holds no source tree.
func TestGateUsesTheBuiltInPolicyOutsideTheCheckout(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "reloader-release")
	if err := tools.GoBuild(t.Context(), "./cmd/release", bin); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	for _, name := range []string{"clean.json", "high-unfixed.json"} {
		b, err := os.ReadFile(reports + name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runIn := func(args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), out.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, out.String()
	}
	if code, out := runIn("gate", "clean.json"); code != cli.ExitOK {
		t.Errorf("gate clean.json with the built-in policy: exit %d\n%s", code, out)
	}
	if code, out := runIn("gate", "high-unfixed.json"); code != cli.ExitRefused {
		t.Errorf("gate high-unfixed.json with the built-in policy: exit %d, want %d\n%s", code, cli.ExitRefused, out)
	}
	code, out := runIn("gate", "--print-policy")
	if code != cli.ExitOK || out != string(gate.DefaultPolicyYAML()) {
		t.Fatalf("gate --print-policy: exit %d, printed\n%s", code, out)
	}
	// What it prints is a policy the gate accepts as a file.
	if err := os.WriteFile(filepath.Join(work, "mine.yaml"), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := runIn("gate", "--policy", "mine.yaml", "clean.json"); code != cli.ExitOK {
		t.Errorf("gate --policy with the printed policy: exit %d\n%s", code, out)
	}
}

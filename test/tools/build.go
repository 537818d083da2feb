package tools

import (
	"fmt"
	"os/exec"
)

// GoBuild builds the repository's package pkg ("./cmd/reloader") into out,
// so end-to-end tests run the real binary.
func GoBuild(pkg, out string) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	build := exec.Command("go", "build", "-o", out, pkg)
	build.Dir = root
	if msg, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %w\n%s", pkg, err, msg)
	}
	return nil
}

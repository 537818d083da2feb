package release_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The release side defines the contract and the trust rules; reloader-mirror
// consumes them. A dependency the other way would put the rules under one of
// their users again (issue 13), so it is refused here.
func TestReleaseDoesNotImportMirror(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list -deps ./release/...: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "github.com/reloader-dev/reloader/mirror" || strings.HasPrefix(pkg, "github.com/reloader-dev/reloader/mirror/") {
			t.Errorf("release/... links %s", pkg)
		}
	}
}

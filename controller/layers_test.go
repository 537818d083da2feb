package controller_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The controller's floors: the decision and the caches know nothing of how
// a reload is reported, and the reporter reads no cache but through the
// small interface it declares (report.Resources), so each can be read,
// tested and changed alone. The rule counts every package a floor depends
// on, however indirectly.
func TestTheControllersLayersImportOnlyDownwards(t *testing.T) {
	const root = "github.com/reloader-dev/reloader/controller/"
	for _, tc := range []struct{ pkg, banned string }{
		{"decide", "report"},
		{"decide", "cache"},
		{"cache", "report"},
		{"report", "cache"},
		{"report", "rollout"},
	} {
		out, err := exec.Command("go", "list", "-deps", "./"+tc.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v", tc.pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == root+tc.banned || strings.HasPrefix(dep, root+tc.banned+"/") {
				t.Errorf("controller/%s depends on controller/%s", tc.pkg, tc.banned)
			}
		}
	}
}

package test

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// One tag push must not be enough to make a signed release: every job of
// the release workflow that can sign (it may mint an OIDC token) runs in the
// protected `release` environment, whose required reviewers approve each
// run, and SECURITY.md says so.
func TestTheReleaseWorkflowSignsOnlyInAProtectedEnvironment(t *testing.T) {
	b, err := os.ReadFile("../.github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Permissions any `json:"permissions"`
		Jobs        map[string]struct {
			Environment any               `json:"environment"`
			Permissions map[string]string `json:"permissions"`
		} `json:"jobs"`
	}
	// Only the shape read here matters; other workflow keys are ignored.
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	if m, ok := wf.Permissions.(map[string]any); !ok || len(m) != 0 {
		t.Errorf("workflow permissions %v, want {} (each job asks for its own)", wf.Permissions)
	}
	signing := 0
	for name, j := range wf.Jobs {
		if j.Permissions["id-token"] != "write" {
			continue
		}
		signing++
		env := j.Environment
		if m, ok := env.(map[string]any); ok {
			env = m["name"]
		}
		if env != "release" {
			t.Errorf("job %s can sign (id-token: write) outside the protected release environment (environment: %v)", name, j.Environment)
		}
	}
	if signing == 0 {
		t.Error("no job of the release workflow signs; the test no longer checks anything")
	}
	sec, err := os.ReadFile("../SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sec), "`environment: release`") || !strings.Contains(string(sec), "TestTheReleaseWorkflowSignsOnlyInAProtectedEnvironment") {
		t.Error("SECURITY.md does not document the protected release environment and this test")
	}
}

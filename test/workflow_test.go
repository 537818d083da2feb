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

// workflowJob is the part of a workflow job the job-graph test reads.
type workflowJob struct {
	Needs       any               `json:"needs"`
	Permissions map[string]string `json:"permissions"`
	Outputs     map[string]string `json:"outputs"`
	Steps       []struct {
		Uses string            `json:"uses"`
		Run  string            `json:"run"`
		Env  map[string]string `json:"env"`
		With map[string]any    `json:"with"`
	} `json:"steps"`
}

// The provenance is isolated from the build (SLSA's isolated provenance, as
// slsa-github-generator does it): one job builds and can neither sign nor
// push nor read a secret; the job that signs and writes the provenance runs
// no build and receives from the build job only the index digests (a job
// output) and the layout they name (an artifact it checks against them).
func TestTheReleaseWorkflowBuildsAndSignsInSeparateJobs(t *testing.T) {
	b, err := os.ReadFile("../.github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]workflowJob `json:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	build, ok := wf.Jobs["build"]
	if !ok {
		t.Fatal("the release workflow has no build job")
	}
	if len(build.Permissions) != 1 || build.Permissions["contents"] != "read" {
		t.Errorf("build job permissions %v, want only contents: read (no id-token, no packages)", build.Permissions)
	}
	if len(build.Outputs) != 1 || build.Outputs["indexes"] == "" {
		t.Errorf("build job outputs %v, want only the index digests", build.Outputs)
	}
	builds := 0
	for _, s := range build.Steps {
		for k, v := range s.Env {
			if strings.Contains(v, "secrets.") {
				t.Errorf("the build job's step reads a secret (%s)", k)
			}
		}
		if strings.Contains(s.Run, "./cmd/release build") {
			builds++
		}
		if strings.Contains(s.Run, "./cmd/release publish") {
			t.Error("the build job publishes")
		}
	}
	if builds != 1 {
		t.Errorf("the build job runs reloader-release build %d times, want 1", builds)
	}
	signing := 0
	for name, j := range wf.Jobs {
		if j.Permissions["id-token"] != "write" {
			continue
		}
		signing++
		if j.Needs != "build" {
			t.Errorf("signing job %s needs %v, want the build job alone", name, j.Needs)
		}
		fromBuild := false
		for _, s := range j.Steps {
			if strings.Contains(s.Run, "./cmd/release build") || strings.Contains(s.Run, "go build") {
				t.Errorf("signing job %s builds", name)
			}
			if strings.Contains(s.Run, "./cmd/release publish") {
				fromBuild = strings.Contains(s.Run, "--from-build _out/build") && strings.Contains(s.Run, `--expect-index "$INDEXES"`) &&
					s.Env["INDEXES"] == "${{ needs.build.outputs.indexes }}"
			}
		}
		if !fromBuild {
			t.Errorf("signing job %s does not publish the build job's layout by the digests it reported", name)
		}
	}
	if signing != 1 {
		t.Errorf("%d jobs can sign, want exactly one", signing)
	}
	sec, err := os.ReadFile("../SECURITY.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sec), "TestTheReleaseWorkflowBuildsAndSignsInSeparateJobs") {
		t.Error("SECURITY.md does not document the isolated provenance and this test")
	}
}

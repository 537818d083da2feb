package test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/reloader-dev/reloader/"

// The floors of the supply-chain half, as docs/contributing.md draws them:
// internal/ is the ground floor, release/ is the vocabulary both sides read
// (the lock, trust, the gate, support), publish/ is the factory that makes
// releases, mirror/ is the consumer. An arrow from a lower floor to a higher
// one puts a rule under one of its users again (issue 48), so each is refused
// here, for what the packages link (tests may reach higher to make fixtures).
func TestTheImportGraphPointsDownwardOnly(t *testing.T) {
	rules := []struct {
		from      string
		forbidden []string
		why       string
	}{
		{"internal", []string{"release", "publish", "mirror", "review", "sbom", "cmd"}, "the ground floor imports no domain"},
		{"release", []string{"publish", "mirror", "review", "sbom", "cmd"}, "the vocabulary imports nothing of the side that produces releases nor of the consumer"},
		{"mirror", []string{"publish", "review", "sbom", "cmd"}, "the consumer neither produces releases nor reviews them"},
		{"review", []string{"publish", "mirror", "cmd"}, "the review is read by the producing side and the CLIs, and reads only the vocabulary"},
		{"controller", []string{"release", "publish", "mirror", "review", "sbom", "cmd"}, "the controller knows nothing of the supply chain"},
	}
	for _, r := range rules {
		deps := linked(t, "../"+r.from+"/...")
		for pkg, via := range deps {
			for _, f := range r.forbidden {
				if pkg == f || strings.HasPrefix(pkg, f+"/") {
					t.Errorf("%s links %s (through %s): %s", r.from, pkg, via, r.why)
				}
			}
		}
	}
}

// Only the producing side and the CLIs import review: the consumer's
// libraries (release/, mirror/) judge a release without the reviewer's page.
func TestReviewIsImportedByTheProducingSideAndTheCLIsOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := []string{"publish/", "sbom", "cmd/", "review", "bench/", "test/"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		from := strings.TrimPrefix(f[0], module)
		for _, imp := range f[1:] {
			if imp != module+"review" {
				continue
			}
			ok := false
			for _, a := range allowed {
				ok = ok || strings.HasPrefix(from, a)
			}
			if !ok {
				t.Errorf("%s imports review; only publish/, sbom and the CLIs may", from)
			}
		}
	}
}

// linked maps every package of this module that the pattern's packages link
// (not their tests) to one package of the pattern that links it.
func linked(t *testing.T, pattern string) map[string]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", pattern).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, err)
	}
	deps := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, d := range f[1:] {
			if strings.HasPrefix(d, module) {
				deps[strings.TrimPrefix(d, module)] = strings.TrimPrefix(f[0], module)
			}
		}
	}
	return deps
}

package decide_test

import (
	"os/exec"
	"strings"
	"testing"
)

// banned are the client-go packages that reach a cache or the apiserver.
// k8s.io/api and apimachinery types are fine: the decision speaks them.
var banned = []string{"k8s.io/client-go/informers", "k8s.io/client-go/kubernetes", "k8s.io/client-go/tools/cache",
	"k8s.io/client-go/dynamic", "k8s.io/client-go/listers", "sigs.k8s.io/controller-runtime"}

func bannedIn(t *testing.T, format string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", format, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var found []string
	for _, pkg := range strings.Fields(string(out)) {
		for _, b := range banned {
			if pkg == b || strings.HasPrefix(pkg, b+"/") {
				found = append(found, pkg)
			}
		}
	}
	return found
}

// The decision is pure: it reads a Reader, never a cache or the apiserver,
// so it can be unit-tested without either and Inspect can run it over any
// objects. Its own imports must not reach for informers or clientsets.
func TestTheDecisionImportsNoInformerNorClientset(t *testing.T) {
	for _, pkg := range bannedIn(t, `{{join .Imports "\n"}}`) {
		t.Errorf("controller/decide imports %s", pkg)
	}
}

// Nor may anything it imports, however indirectly: the model it speaks
// (controller/workload, annotations, refs) is pure too, and applying a
// change lives in controller/rollout, which the decision never imports.
func TestNothingTheDecisionImportsReachesTheAPI(t *testing.T) {
	for _, pkg := range bannedIn(t, `{{join .Deps "\n"}}`) {
		t.Errorf("controller/decide depends on %s", pkg)
	}
}

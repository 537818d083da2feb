package decide_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The decision is pure: it reads a Reader, never a cache or the apiserver,
// so it can be unit-tested without either and Inspect can run it over any
// objects. Its own imports must not reach for informers or clientsets.
// (controller/workload, whose View and Change it speaks, still imports
// client-go to apply changes; that is the caller's business.)
func TestTheDecisionImportsNoInformerNorClientset(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"k8s.io/client-go/informers", "k8s.io/client-go/kubernetes", "k8s.io/client-go/tools/cache",
			"k8s.io/client-go/dynamic", "k8s.io/client-go/listers", "sigs.k8s.io/controller-runtime"} {
			if pkg == banned || strings.HasPrefix(pkg, banned+"/") {
				t.Errorf("controller/decide imports %s", pkg)
			}
		}
	}
}

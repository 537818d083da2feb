package controller_test

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// A controller meeting running workloads writes their first applied-hashes
// records at --adoption-qps (after a burst of 10), never as fast as its
// workers go, so those metadata-only writes never hold up a reload. A change
// made while a workload's record still waits for its slot reloads it all the
// same: the record decided at its first sync stands in for the write.
func TestAdoptionIsPacedAndNeverSwallowsAChange(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	names := createUsers(t, cs, ns, 30)
	started := time.Now()
	r := startReloader(t, "", "--namespaces="+ns, "--adoption-qps=1")
	r.waitIdle(t, len(names))

	recorded := func() (in, out []string) {
		l, err := cs.AppsV1().Deployments(ns).List(ctxFor(t), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range l.Items {
			if _, ok := d.Annotations["reloader.dev/applied-hashes"]; ok {
				in = append(in, d.Name)
			} else {
				out = append(out, d.Name)
			}
		}
		return in, out
	}
	in, out := recorded()
	// Every workload has had its first sync; at 1 a second, most records wait.
	if most := 10 + int(time.Since(started).Seconds()) + 1; len(in) > most {
		t.Fatalf("%d records written %v after start, want at most %d at --adoption-qps=1", len(in), time.Since(started).Round(time.Millisecond), most)
	}
	if len(out) == 0 {
		t.Fatal("no record waits for its slot: nothing to test")
	}
	waiting := out[0]
	updateConfigMapData(t, cs, ns, waiting, map[string]string{"v": "2"})
	reloadertest.Eventually(t, 10*time.Second, func() (bool, string) {
		return revision(t, cs, ns, waiting) == 2, fmt.Sprintf("%s, whose record was waiting, has not reloaded", waiting)
	})

	// The rest are adopted in their slots, and adoption rolls nothing.
	for _, n := range names {
		reloadertest.WaitRecorded(t, cs, ns, n)
	}
	for _, n := range names {
		if want := int64(1 + btoi(n == waiting)); revision(t, cs, ns, n) != want {
			t.Errorf("%s: revision %d, want %d", n, revision(t, cs, ns, n), want)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

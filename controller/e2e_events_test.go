package controller_test

import (
	"fmt"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// The Events of a burst of reloads are held while the reloads are being
// written, so they cost the reloads nothing (controller/internal/busy), and then every
// one of them lands: a Reloaded Event per workload, none lost, none doubled.
func TestEveryReloadOfABurstGetsItsEventAfterIt(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	names := createUsers(t, cs, ns, 40)
	r := startReloader(t, "", "--namespaces="+ns)
	r.waitIdle(t, len(names))
	for _, n := range names {
		reloadertest.WaitRecorded(t, cs, ns, n)
	}

	ctx := ctxFor(t)
	var g errgroup.Group
	for _, n := range names {
		g.Go(func() error {
			_, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, reloadertest.ConfigMap(n, map[string]string{"v": "2"}), metav1.UpdateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("changing the ConfigMaps at once: %v", err)
	}
	for _, n := range names {
		reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
			return revision(t, cs, ns, n) == 2, n + " has not reloaded"
		})
	}

	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		count := map[string]int32{}
		for _, e := range listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=Reloaded"}).Items {
			count[e.InvolvedObject.Name] += max(e.Count, 1)
		}
		for _, n := range names {
			if count[n] != 1 {
				return false, fmt.Sprintf("%s has %d Reloaded Events, want 1 (all: %v)", n, count[n], count)
			}
		}
		return true, ""
	})
}

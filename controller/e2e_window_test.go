package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// A change made outside the workload's change window is applied when the
// window opens, not before, and says so once (an OutsideChangeWindow Event
// with the time); a window that does not parse holds reloads (fail closed)
// and is reported. The window here opens every minute for 10s, in UTC.
func TestChangeOutsideTheWindowIsAppliedAtItsStart(t *testing.T) {
	requireControlPlane(t)
	t.Parallel()
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("cfg", map[string]string{"k": "1"}))
	for name, window := range map[string]string{"windowed": "* * * * * 10s", "typo": "0 22 * * 1-5"} {
		ann := auto()
		ann["reloader.stakater.com/change-window"] = window
		createDeployment(t, cs, ns, reloadertest.Deployment(name, ann, reloadertest.PodTemplate(name,
			corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("cfg")}})))
	}
	r := startReloader(t, "", "--namespaces="+ns)
	waitRecorded(t, cs, ns, "windowed")
	waitRecorded(t, cs, ns, "typo")

	// Change well outside a window: at least 3s after one closes and 5s
	// before the next opens.
	for s := time.Now().UTC().Second(); s < 13 || s > 54; s = time.Now().UTC().Second() {
		time.Sleep(200 * time.Millisecond)
	}
	changed := time.Now().UTC()
	opens := changed.Truncate(time.Minute).Add(time.Minute)
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, reloadertest.ConfigMap("cfg", map[string]string{"k": "2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	reloadertest.Eventually(t, 10*time.Second, func() (bool, string) {
		msgs = nil
		for _, e := range listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=OutsideChangeWindow,involvedObject.name=windowed"}).Items {
			msgs = append(msgs, e.Message)
		}
		return len(msgs) > 0, "no OutsideChangeWindow Event"
	})
	if want := "applied when it opens at " + opens.Format(time.RFC3339); len(msgs) != 1 || !strings.Contains(msgs[0], want) {
		t.Errorf("OutsideChangeWindow Events %q, want one containing %q", msgs, want)
	}
	if rev := revision(t, cs, ns, "windowed"); rev != 1 && time.Now().Before(opens) {
		t.Fatalf("reloaded at revision %d before its window opened at %s", rev, opens)
	}
	waitRevisionBy(t, ns, "windowed", 2, time.Until(opens)+20*time.Second)
	for _, rs := range listReplicaSets(t, cs, ns, metav1.ListOptions{LabelSelector: "app=windowed"}).Items {
		if rs.Annotations["deployment.kubernetes.io/revision"] == "2" && rs.CreationTimestamp.Time.Before(opens) {
			t.Errorf("the reload's ReplicaSet was created at %s, before the window opened at %s", rs.CreationTimestamp.UTC(), opens)
		}
	}
	if got := r.metric(t, "reloader_reload_window_deferred_total"); got != 1 {
		t.Errorf("reloader_reload_window_deferred_total = %v, want 1", got)
	}

	// The typo: reported, never reloaded.
	var fail []string
	for _, e := range listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=ReloadFail,involvedObject.name=typo"}).Items {
		fail = append(fail, e.Message)
	}
	if want := "reloader.stakater.com/change-window on the metadata"; !strings.Contains(fmt.Sprint(fail), want) || !strings.Contains(fmt.Sprint(fail), "is not a positive duration") {
		t.Errorf("ReloadFail Events on typo %q, want one naming %s and the missing duration", fail, want)
	}
	if rev := revision(t, cs, ns, "typo"); rev != 1 {
		t.Errorf("a workload whose change window does not parse was reloaded: revision %d", rev)
	}
}

func waitRevisionBy(t *testing.T, ns, name string, want int64, timeout time.Duration) {
	t.Helper()
	cs := cp.AdminClient(t)
	reloadertest.Eventually(t, timeout, func() (bool, string) {
		r := revision(t, cs, ns, name)
		return r == want, fmt.Sprintf("Deployment %s/%s revision %d, want %d", ns, name, r, want)
	})
}

package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// A Deployment a person paused stays paused, also when it carries a pause
// period: the reload goes into its template (it rolls out when the person
// resumes it), no paused-at is added, and the controller never resumes it.
func TestPersonsPauseIsNotUndone(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, reloadertest.ConfigMap("cfg", map[string]string{"k": "1"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ann := auto()
	ann["deployment.reloader.stakater.com/pause-period"] = "1s"
	d := reloadertest.Deployment("held", ann, reloadertest.PodTemplate("held",
		corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("cfg")}}))
	d.Spec.Paused = true
	createDeployment(t, cs, ns, d)
	startReloader(t, "", "--namespaces="+ns)
	// A paused Deployment gets no revision; the record says it was adopted.
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		_, ok := getDeployment(t, cs, ns, "held").Annotations["reloader.dev/applied-hashes"]
		return ok, "Deployment held was not adopted"
	})
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, reloadertest.ConfigMap("cfg", map[string]string{"k": "2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, 20*time.Second, func() (bool, string) {
		_, ok := reloadertest.EnvOf(getDeployment(t, cs, ns, "held"), "app", "STAKATER_CFG_CONFIGMAP")
		return ok, "the reload did not reach the template"
	})
	time.Sleep(3 * time.Second) // well past the pause period
	got := getDeployment(t, cs, ns, "held")
	if !got.Spec.Paused {
		t.Fatal("the controller resumed a Deployment a person had paused")
	}
	if at, ok := got.Annotations["deployment.reloader.stakater.com/paused-at"]; ok {
		t.Errorf("the controller claimed the person's pause with paused-at=%s", at)
	}
}

// The pause watchdog: a pause without the paused-at annotation that lasts
// longer than the workload's pause period is reported once (a Warning
// Event naming who paused it, reloader_pause_outlived_total). A person's
// pause is left alone; the controller's own pause whose paused-at was lost
// (here removed by another field manager) is resumed.
func TestPauseWatchdog(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("cfg", map[string]string{"k": "1"}))
	for _, name := range []string{"persons", "ours"} {
		ann := auto()
		ann["deployment.reloader.stakater.com/pause-period"] = "3s"
		createDeployment(t, cs, ns, reloadertest.Deployment(name, ann, reloadertest.PodTemplate(name,
			corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap("cfg")}})))
	}
	r := startReloader(t, "", "--namespaces="+ns)
	waitRecorded(t, cs, ns, "persons")
	waitRecorded(t, cs, ns, "ours")

	patch := func(name, manager, body string) {
		t.Helper()
		if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: manager}); err != nil {
			t.Fatal(err)
		}
	}
	// A person pauses one; a reload pauses the other and someone drops its
	// paused-at annotation.
	patch("persons", "oncall-engineer", `{"spec":{"paused":true}}`)
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, reloadertest.ConfigMap("cfg", map[string]string{"k": "2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, 20*time.Second, func() (bool, string) {
		_, ok := getDeployment(t, cs, ns, "ours").Annotations["deployment.reloader.stakater.com/paused-at"]
		return ok, "the reload did not pause ours"
	})
	patch("ours", "gitops-sync", `{"metadata":{"annotations":{"deployment.reloader.stakater.com/paused-at":null}}}`)

	outlived := func(name string) string {
		var msg string
		reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
			l := listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=PauseOutlived,involvedObject.name=" + name})
			if len(l.Items) != 1 {
				return false, fmt.Sprintf("%s: %d PauseOutlived Events, want 1", name, len(l.Items))
			}
			msg = l.Items[0].Message
			return true, ""
		})
		return msg
	}
	if msg := outlived("persons"); !strings.Contains(msg, "spec.paused last written by oncall-engineer") || !strings.Contains(msg, "left paused") {
		t.Errorf("persons: %q", msg)
	}
	if msg := outlived("ours"); !strings.Contains(msg, "spec.paused last written by reloader") || !strings.Contains(msg, "resumed") {
		t.Errorf("ours: %q", msg)
	}
	reloadertest.Eventually(t, 20*time.Second, func() (bool, string) {
		return !getDeployment(t, cs, ns, "ours").Spec.Paused, "the controller's own outlived pause was not resumed"
	})
	time.Sleep(2 * time.Second)
	if !getDeployment(t, cs, ns, "persons").Spec.Paused {
		t.Error("the watchdog resumed a person's pause")
	}
	if got := r.metric(t, `reloader_pause_outlived_total{resumed="false"}`); got != 1 {
		t.Errorf(`reloader_pause_outlived_total{resumed="false"} = %v, want 1`, got)
	}
	if got := r.metric(t, `reloader_pause_outlived_total{resumed="true"}`); got != 1 {
		t.Errorf(`reloader_pause_outlived_total{resumed="true"} = %v, want 1`, got)
	}
	if n := len(listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=PauseOutlived"}).Items); n != 2 {
		t.Errorf("%d PauseOutlived Events, want one per pause", n)
	}
}

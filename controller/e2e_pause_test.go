package controller_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

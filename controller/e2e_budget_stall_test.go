package controller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/budget"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// statefulSet is a one-replica StatefulSet running tmpl, with ann on its
// metadata.
func statefulSet(name string, ann map[string]string, tmpl corev1.PodTemplateSpec) *appsv1.StatefulSet {
	one := int32(1)
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: ann},
		Spec: appsv1.StatefulSetSpec{Replicas: &one, Template: tmpl,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": tmpl.Labels["app"]}}}}
}

// waitRolling waits until the Deployment or StatefulSet ns/name is rolling
// out, or not, as budget.Rolling reads its status; it returns the object.
func waitRolling(t *testing.T, cs kubernetes.Interface, ns, kind, name string, want bool) any {
	t.Helper()
	var obj any
	reloadertest.Eventually(t, 60*time.Second, func() (bool, string) {
		var err error
		switch kind {
		case "Deployment":
			obj, err = cs.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		default:
			obj, err = cs.AppsV1().StatefulSets(ns).Get(context.Background(), name, metav1.GetOptions{})
		}
		return err == nil && budget.Rolling(obj) == want, fmt.Sprintf("%s %s/%s rolling %v, want %v (%v)", kind, ns, name, !want, want, err)
	})
	return obj
}

// waitReloaded waits until the pod template of the Deployment or
// StatefulSet ns/name carries the reload variable of ConfigMap cm at a new
// value (not old), and returns it.
func waitReloaded(t *testing.T, cs kubernetes.Interface, ns, kind, name, cm, old string, timeout time.Duration) string {
	t.Helper()
	variable := "STAKATER_" + strings.ToUpper(strings.ReplaceAll(cm, "-", "_")) + "_CONFIGMAP"
	var got string
	reloadertest.Eventually(t, timeout, func() (bool, string) {
		var tmpl corev1.PodTemplateSpec
		switch kind {
		case "Deployment":
			d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			tmpl = d.Spec.Template
		default:
			s, err := cs.AppsV1().StatefulSets(ns).Get(context.Background(), name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			tmpl = s.Spec.Template
		}
		got = templateEnv(tmpl, variable)
		return got != "" && got != old, fmt.Sprintf("%s %s/%s: %s=%q, want a new value", kind, ns, name, variable, got)
	})
	return got
}

func podUses(p *corev1.Pod, variable string) bool {
	for _, c := range p.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == variable {
				return true
			}
		}
	}
	return false
}

// Under --max-concurrent-rollouts=1, a StatefulSet the controller does not
// manage, whose pod never gets ready, holds no slot: the reload of a managed
// Deployment is not held behind it.
func TestRolloutBudgetIgnoresUnmanagedWorkloads(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	fakeKubeletFor(t, cs, ns, 200*time.Millisecond, func(p *corev1.Pod) bool { return p.Labels["app"] != "other" })
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("web-config", map[string]string{"k": "1"}),
		reloadertest.Deployment("web", auto(), usesConfigMap("web", "web-config")),
		statefulSet("other", nil, reloadertest.PodTemplate("other")))
	r := startReloader(t, "", "--namespaces="+ns, "--max-concurrent-rollouts=1")
	waitRecorded(t, cs, ns, "web")
	waitRolling(t, cs, ns, "Deployment", "web", false)
	waitRolling(t, cs, ns, "StatefulSet", "other", true)

	updateConfigMapData(t, cs, ns, "web-config", map[string]string{"k": "2"})
	waitReloaded(t, cs, ns, "Deployment", "web", "web-config", "", 30*time.Second)
	if waits := listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=RolloutWaiting"}).Items; len(waits) != 0 {
		t.Errorf("%d RolloutWaiting Events, want none: %q", len(waits), waits[0].Message)
	}
	if held := r.metric(t, "reloader_rollouts_held_total"); held != 0 {
		t.Errorf("reloader_rollouts_held_total %v, want 0", held)
	}
}

// Under --max-concurrent-rollouts=1 and --rollout-deadline=3s, the rollout
// of a managed StatefulSet that never progresses (its new pod never gets
// ready) holds the slot for 3s: the Deployment's reload due meanwhile
// waits, then starts once the StatefulSet's rollout is reported stalled,
// once (a ReloadRolloutStalled Warning, reloader_rollouts_stalled_total),
// though the StatefulSet still rolls.
func TestRolloutBudgetFreesTheSlotOfAStalledRollout(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	const deadline = 3 * time.Second
	fakeKubeletFor(t, cs, ns, 200*time.Millisecond, func(p *corev1.Pod) bool {
		return p.Labels["app"] != "db" || !podUses(p, "STAKATER_DB_CONFIG_CONFIGMAP")
	})
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("db-config", map[string]string{"k": "1"}),
		reloadertest.ConfigMap("web-config", map[string]string{"k": "1"}),
		statefulSet("db", auto(), usesConfigMap("db", "db-config")),
		reloadertest.Deployment("web", auto(), usesConfigMap("web", "web-config")))
	r := startReloader(t, "", "--namespaces="+ns, "--max-concurrent-rollouts=1", "--rollout-deadline="+deadline.String())
	waitRecorded(t, cs, ns, "web")
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
		return err == nil && s.Annotations[annotations.Applied] != "", fmt.Sprintf("StatefulSet db not recorded yet (%v)", err)
	})
	waitRolling(t, cs, ns, "Deployment", "web", false)
	waitRolling(t, cs, ns, "StatefulSet", "db", false)

	// The reload of db is admitted after this: the slot is held from then.
	beforeDB := time.Now()
	updateConfigMapData(t, cs, ns, "db-config", map[string]string{"k": "2"})
	waitReloaded(t, cs, ns, "StatefulSet", "db", "db-config", "", 30*time.Second)
	updateConfigMapData(t, cs, ns, "web-config", map[string]string{"k": "2"})
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		waits := listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=RolloutWaiting,involvedObject.name=web"}).Items
		return len(waits) == 1, fmt.Sprintf("%d RolloutWaiting Events on web, want 1: the StatefulSet's rollout holds the slot", len(waits))
	})
	webValue := waitReloaded(t, cs, ns, "Deployment", "web", "web-config", "", 30*time.Second)
	if waited := time.Since(beforeDB); waited < deadline {
		t.Errorf("web reloaded %s after db's change, before db's --rollout-deadline (%s) passed", waited, deadline)
	}
	waitRolling(t, cs, ns, "StatefulSet", "db", true) // freed by the deadline, not by finishing

	// Another reload counts the rollouts again: the stall is not told twice.
	updateConfigMapData(t, cs, ns, "web-config", map[string]string{"k": "3"})
	waitReloaded(t, cs, ns, "Deployment", "web", "web-config", webValue, 30*time.Second)
	r.waitIdle(t, 4)
	stalls := listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=ReloadRolloutStalled"}).Items
	want := fmt.Sprintf("has not finished within --rollout-deadline (%s): it no longer holds a slot of the rollout budget", deadline)
	if len(stalls) != 1 || stalls[0].Count > 1 || stalls[0].Type != corev1.EventTypeWarning ||
		stalls[0].InvolvedObject.Kind != "StatefulSet" || !strings.Contains(stalls[0].Message, want) {
		t.Fatalf("ReloadRolloutStalled Events %+v, want one Warning on StatefulSet db saying %q", stalls, want)
	}
	t.Logf("%s: %s", stalls[0].Reason, stalls[0].Message)
	if n := r.metric(t, "reloader_rollouts_stalled_total"); n != 1 {
		t.Errorf("reloader_rollouts_stalled_total %v, want 1", n)
	}
	s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Generation != 2 {
		t.Errorf("db at generation %d, want 2: reloaded once", s.Generation)
	}
}

package controller_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/budget"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// fakeKubelet stands in for the kubelets the test control plane does not
// run: every pod of ns that has existed for startup is marked Running and
// Ready, so kube-controller-manager's rollouts progress and finish as they
// would on nodes (pods are never bound, so deleting one is immediate).
func fakeKubelet(t *testing.T, cs kubernetes.Interface, ns string, startup time.Duration) {
	fakeKubeletFor(t, cs, ns, startup, func(*corev1.Pod) bool { return true })
}

// fakeKubeletFor is fakeKubelet for the pods ready accepts; the others stay
// Pending, as pods whose readiness never succeeds.
func fakeKubeletFor(t *testing.T, cs kubernetes.Interface, ns string, startup time.Duration, ready func(*corev1.Pod) bool) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		first := map[string]time.Time{}
		for ctx.Err() == nil {
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				for i := range pods.Items {
					p := &pods.Items[i]
					if p.Status.Phase == corev1.PodRunning || p.DeletionTimestamp != nil || !ready(p) {
						continue
					}
					if _, ok := first[p.Name]; !ok {
						first[p.Name] = time.Now()
					}
					if time.Since(first[p.Name]) < startup {
						continue
					}
					now := metav1.Now()
					p.Status.Phase = corev1.PodRunning
					p.Status.Conditions = []corev1.PodCondition{
						{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
						{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
					}
					p.Status.ContainerStatuses = nil
					for _, c := range p.Spec.Containers {
						p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true,
							State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
					}
					_, _ = cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
}

// rollingNow counts the Deployments of ns rolling out, by the same reading
// of their status the controller uses.
func rollingNow(ctx context.Context, cs kubernetes.Interface, ns string) (int, int, error) {
	l, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	rolling, revised := 0, 0
	for i := range l.Items {
		d := &l.Items[i]
		if budget.Rolling(d) {
			rolling++
		}
		if d.Annotations["deployment.kubernetes.io/revision"] == "2" && !budget.Rolling(d) {
			revised++
		}
	}
	return rolling, revised, nil
}

// With --max-concurrent-rollouts=5 and 50 Deployments on one Secret, a
// change to the Secret rolls all 50, never more than 5 at once: the rest
// wait (one RolloutWaiting Event each, reloader_rollouts_held_total) and
// start as slots free. kube-controller-manager runs the rollouts; a fake
// kubelet makes the pods ready.
func TestRolloutBudgetRollsAllButNeverTooManyAtOnce(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	const n, limit = 50, 5
	fakeKubelet(t, cs, ns, 500*time.Millisecond)
	objs := []any{reloadertest.Secret("shared", map[string]string{"token": "1"})}
	for i := range n {
		name := fmt.Sprintf("app-%02d", i)
		objs = append(objs, reloadertest.Deployment(name, auto(), reloadertest.PodTemplate(name,
			corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromSecret("shared")}})))
	}
	reloadertest.MustCreate(t, cs, ns, objs...)
	r := startReloader(t, "", "--namespaces="+ns, fmt.Sprintf("--max-concurrent-rollouts=%d", limit))
	for i := range n {
		waitRecorded(t, cs, ns, fmt.Sprintf("app-%02d", i))
	}
	reloadertest.Eventually(t, 60*time.Second, func() (bool, string) {
		rolling, _, err := rollingNow(ctx, cs, ns)
		return err == nil && rolling == 0, fmt.Sprintf("first rollouts still going: %d (%v)", rolling, err)
	})

	if err := updateSecret("shared", func(s *corev1.Secret) { s.Data["token"] = []byte("2") })(ctx, cs, ns); err != nil {
		t.Fatal(err)
	}
	peak := 0
	reloadertest.EventuallyEvery(t, 50*time.Millisecond, 3*time.Minute, func() (bool, string) {
		rolling, done, err := rollingNow(ctx, cs, ns)
		if err != nil {
			return false, err.Error()
		}
		peak = max(peak, rolling)
		if rolling > limit {
			t.Fatalf("%d Deployments rolling out at once, the budget is %d", rolling, limit)
		}
		return done == n, fmt.Sprintf("%d of %d rolled out (%d rolling)", done, n, rolling)
	})
	r.waitIdle(t, 2*n)
	t.Logf("peak concurrent rollouts %d of %d", peak, limit)
	if got := r.metric(t, `reloader_reload_executed_total{success="true"}`); got != n {
		t.Errorf("%v reloads, want %d", got, n)
	}
	held := r.metric(t, "reloader_rollouts_held_total")
	waits := listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=RolloutWaiting"}).Items
	if held < n-limit || len(waits) != int(held) {
		t.Errorf("%v reloads held, %d RolloutWaiting Events; want at least %d held, one Event each", held, len(waits), n-limit)
	}
	if w := r.metric(t, "reloader_rollouts_waiting"); w != 0 {
		t.Errorf("reloader_rollouts_waiting %v after every rollout finished", w)
	}
}

package budget

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/workload"
)

func ptr[T any](v T) *T { return &v }

func deploy(gen, observed int64, want, updated, total, available int32, mutate ...func(*appsv1.Deployment)) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: gen}, Spec: appsv1.DeploymentSpec{Replicas: ptr(want)},
		Status: appsv1.DeploymentStatus{ObservedGeneration: observed, UpdatedReplicas: updated, Replicas: total, AvailableReplicas: available}}
	for _, m := range mutate {
		m(d)
	}
	return d
}

func TestRollingReadsTheStatusKubeControllerManagerKeeps(t *testing.T) {
	for name, tc := range map[string]struct {
		obj  any
		want bool
	}{
		"deployment: spec not seen yet":          {deploy(2, 1, 1, 1, 1, 1), true},
		"deployment: new pods not all updated":   {deploy(2, 2, 3, 1, 4, 3), true},
		"deployment: old pods still there":       {deploy(2, 2, 3, 3, 4, 3), true},
		"deployment: updated, not yet available": {deploy(2, 2, 3, 3, 3, 2), true},
		"deployment: done":                       {deploy(2, 2, 3, 3, 3, 3), false},
		"deployment: scaled to zero":             {deploy(2, 2, 0, 0, 0, 0), false},
		"deployment: paused":                     {deploy(2, 2, 3, 1, 4, 3, func(d *appsv1.Deployment) { d.Spec.Paused = true }), false},
		"deployment: progress deadline exceeded": {deploy(2, 2, 3, 1, 4, 3, func(d *appsv1.Deployment) {
			d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: "False", Reason: "ProgressDeadlineExceeded"}}
		}), false},
		"statefulset: rolling": {&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(3))},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, UpdatedReplicas: 1, ReadyReplicas: 3}}, true},
		"statefulset: done": {&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(3))},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, UpdatedReplicas: 3, ReadyReplicas: 3}}, false},
		"statefulset: partitioned, updated above the partition": {&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(3)), UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
				Type: appsv1.RollingUpdateStatefulSetStrategyType, RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr(int32(2))}}},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, UpdatedReplicas: 1, ReadyReplicas: 3}}, false},
		"statefulset: OnDelete": {&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Spec: appsv1.StatefulSetSpec{Replicas: ptr(int32(3)),
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}},
			Status: appsv1.StatefulSetStatus{ObservedGeneration: 2, UpdatedReplicas: 0, ReadyReplicas: 3}}, false},
		"daemonset: rolling": {&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Status: appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 4, UpdatedNumberScheduled: 2, NumberAvailable: 4}}, true},
		"daemonset: done": {&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Status: appsv1.DaemonSetStatus{ObservedGeneration: 2, DesiredNumberScheduled: 4, UpdatedNumberScheduled: 4, NumberAvailable: 4}}, false},
		"daemonset: spec not seen yet": {&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Generation: 3},
			Status: appsv1.DaemonSetStatus{ObservedGeneration: 2}}, true},
	} {
		if got := Rolling(tc.obj); got != tc.want {
			t.Errorf("%s: Rolling = %v, want %v", name, got, tc.want)
		}
	}
}

func key(ns, name string) workload.Key {
	return workload.Key{Kind: workload.Deployment, Namespace: ns, Name: name}
}

// view is Deployment ns/name at resourceVersion rv, for Admit.
func view(ns, name, rv string) workload.View {
	v, err := workload.ViewOf(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: rv, Generation: 1}})
	if err != nil {
		panic(err)
	}
	return v
}

// With 2 slots and one rolling, one reload starts; the others wait, and
// when slots free they start in the order they became due, not in the
// order they happen to ask again.
func TestGateAdmitsInTheOrderReloadsBecameDue(t *testing.T) {
	g := New(Options{Max: 2})
	t0 := time.Unix(1000, 0)
	rolling := Counts{Cluster: 1}
	var order []string
	for i, name := range []string{"c", "a", "b"} {
		v := g.Admit(view("ns", name, "1"), rolling, t0.Add(time.Duration(i)*time.Second))
		if v.Admitted {
			order = append(order, name)
			rolling.Cluster++
		} else if !v.First || v.Limit != 2 || v.Scope != "cluster" {
			t.Errorf("%s held: %+v, want a first hold by the cluster limit of 2", name, v)
		}
	}
	if fmt.Sprint(order) != "[c]" {
		t.Fatalf("admitted %v, want [c]", order)
	}
	// One rollout finishes: b asks first but a became due earlier.
	rolling.Cluster = 1
	now := t0.Add(10 * time.Second)
	if v := g.Admit(view("ns", "b", "1"), rolling, now); v.Admitted || v.First || v.Ahead != 1 {
		t.Errorf("b: %+v, want held behind a, not a first hold", v)
	}
	if v := g.Admit(view("ns", "a", "1"), rolling, now); !v.Admitted {
		t.Errorf("a: %+v, want admitted", v)
	}
	if w := g.Waiting(now); fmt.Sprint(w) != fmt.Sprint([]workload.Key{key("ns", "b")}) {
		t.Errorf("waiting %v, want [b]", w)
	}
}

func TestGatePerNamespaceLimit(t *testing.T) {
	g := New(Options{PerNamespace: 1})
	now := time.Unix(1000, 0)
	counts := Counts{Cluster: 5, ByNamespace: map[string]int{"busy": 1}}
	if v := g.Admit(view("busy", "x", "1"), counts, now); v.Admitted || v.Scope != "busy" || v.Rolling != 1 {
		t.Errorf("busy/x: %+v, want held by namespace busy", v)
	}
	if v := g.Admit(view("quiet", "y", "1"), counts, now); !v.Admitted {
		t.Errorf("quiet/y: %+v, want admitted: its namespace has a free slot", v)
	}
}

// A waiter no sync asks about any more loses its place.
func TestGateStaleWaiters(t *testing.T) {
	g := New(Options{Max: 1})
	now := time.Unix(1000, 0)
	g.Admit(view("ns", "old", "1"), Counts{Cluster: 1}, now)
	later := now.Add(2 * stale)
	if v := g.Admit(view("ns", "new", "1"), Counts{}, later); !v.Admitted {
		t.Errorf("new: %+v, want admitted: the stale waiter ahead no longer counts", v)
	}
	g.Forget(key("ns", "old"))
	if w := g.Waiting(later); len(w) != 0 {
		t.Errorf("waiting %v after Forget", w)
	}
}

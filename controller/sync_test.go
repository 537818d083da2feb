package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/budget"
	"github.com/reloader-dev/reloader/controller/cache"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/internal/busy"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/workload"
)

// The sync, specified in kubernetes/sample-controller's style: a fixture
// holds a fake clientset and caches built from the same objects
// (cache.FromObjects, the transforms and indexes of the informers), a test
// calls sync directly and reads the actions it sent. The order of the gates
// is specified here; the end-to-end suite keeps what needs a real apiserver.

var syncNow = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

type fixture struct {
	t      *testing.T
	cs     *fake.Clientset
	c      *Controller
	events *record.FakeRecorder
}

// newFixture builds a controller over objs; every workload among them is
// delivered as the initial list delivers it (no birth).
func newFixture(t *testing.T, o Options, objs ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{t: t, cs: fake.NewClientset(objs...), events: record.NewFakeRecorder(100)}
	o.Metrics = metrics.New(prometheus.NewRegistry(), metrics.Options{})
	o.Recorder = f.events
	if o.Now == nil {
		o.Now = func() time.Time { return syncNow }
	}
	var in []any
	for _, obj := range objs {
		in = append(in, obj)
	}
	caches, err := cache.FromObjects(o.CacheOptions(), in)
	if err != nil {
		t.Fatal(err)
	}
	if f.c, err = New(f.cs, caches, o); err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if v, err := workload.ViewOf(obj); err == nil {
			f.c.keys.onAdd(v.Key(), v.Object.GetUID(), nil)
		}
	}
	return f
}

func (f *fixture) sync(name string) result {
	f.t.Helper()
	r, err := f.c.sync(context.Background(), workload.Key{Kind: workload.Deployment, Namespace: "apps", Name: name})
	if err != nil {
		f.t.Fatalf("sync of %s: %v", name, err)
	}
	return r
}

// writes are the actions that change something, as "verb resource".
func (f *fixture) writes() []string {
	var w []string
	for _, a := range f.cs.Actions() {
		if v := a.GetVerb(); v != "get" && v != "list" && v != "watch" {
			w = append(w, v+" "+a.GetResource().Resource)
		}
	}
	return w
}

// reasons are the reasons of the Events recorded so far.
func (f *fixture) reasons() []string {
	var out []string
	for {
		select {
		case e := <-f.events.Events:
			out = append(out, strings.Fields(e)[1])
		default:
			return out
		}
	}
}

func configMap(data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-config", Namespace: "apps", ResourceVersion: "10",
		CreationTimestamp: metav1.NewTime(syncNow.Add(-time.Hour))}, Data: map[string]string{"k": data}}
}

// web is a Deployment using app-config, with annotations kv.
func web(kv ...string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", UID: "web-1", ResourceVersion: "5",
		Generation: 1, Annotations: map[string]string{}}}
	d.Status.ObservedGeneration = 1
	for i := 0; i+1 < len(kv); i += 2 {
		d.Annotations[kv[i]] = kv[i+1]
	}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Env: []corev1.EnvVar{{Name: "K",
		ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}, Key: "k"}}}}}}
	return d
}

// recorded is d with the record the controller writes when cm is what it
// applied.
func recorded(t *testing.T, d *appsv1.Deployment, cm *corev1.ConfigMap) *appsv1.Deployment {
	return recordedUnder(t, Options{}, d, cm)
}

// recordedUnder is recorded by a controller with options o.
func recordedUnder(t *testing.T, o Options, d *appsv1.Deployment, cm *corev1.ConfigMap) *appsv1.Deployment {
	t.Helper()
	v, err := workload.ViewOf(d)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := Inspect(o, v, []any{cm})
	if err != nil || dec.NextRecord == "" {
		t.Fatalf("recording %s: %v (record %q)", v.Key(), err, dec.NextRecord)
	}
	d = d.DeepCopy()
	d.Annotations[annotations.Applied] = dec.NextRecord
	d.Annotations[annotations.AppliedVersions] = dec.NextVersions
	return d
}

const auto = "reloader.stakater.com/auto"

// Each gate of the sync, in its order, with the actions a sync sends and
// the result it returns.
func TestSyncAppliesItsGatesInOrder(t *testing.T) {
	before, after := configMap("v1"), configMap("v2")
	after.ResourceVersion = "11"
	other := recorded(t, web(auto, "true"), before)                 // managed: adopted and opted in
	other.Name, other.UID, other.Generation = "other", "other-1", 2 // rolling: its controller has not seen generation 2
	closed := fmt.Sprintf("0 %d * * * 1h", syncNow.Add(2*time.Hour).Hour())
	for _, tc := range []struct {
		name   string
		o      Options
		objs   []runtime.Object
		writes []string
		events []string
		check  func(t *testing.T, r result)
	}{
		{name: "scope: an ignored namespace writes nothing and adopts",
			o:    Options{Options: decide.Options{NamespacesToIgnore: []string{"apps"}}},
			objs: []runtime.Object{recorded(t, web(auto, "true"), before), after},
			check: func(t *testing.T, r result) {
				if !r.adopted {
					t.Error("not adopted: annotated later, it would be judged against its creation")
				}
			}},
		{name: "not opted in: nothing", objs: []runtime.Object{web(), after}},
		{name: "first sight from the initial list: the record only, paced as an adoption",
			objs: []runtime.Object{web(auto, "true"), after}, writes: []string{"patch deployments"}},
		{name: "up to date: nothing", objs: []runtime.Object{recorded(t, web(auto, "true"), after), after}},
		{name: "changed: one reload",
			objs: []runtime.Object{recorded(t, web(auto, "true"), before), after}, writes: []string{"patch deployments"},
			events: []string{"Reloaded"}, check: func(t *testing.T, r result) {
				if !r.reloaded {
					t.Error("not reported as reloaded")
				}
			}},
		{name: "pause: a running pause period waits for its end",
			objs: []runtime.Object{paused(recorded(t, web(auto, "true", "deployment.reloader.stakater.com/pause-period", "5m"), before)), after},
			check: func(t *testing.T, r result) {
				if r.requeueAfter != 4*time.Minute {
					t.Errorf("requeue after %s, want the 4m the pause still runs", r.requeueAfter)
				}
			}},
		{name: "storm control: held until the interval has passed",
			o:    Options{Options: decide.Options{MinReloadInterval: time.Minute}},
			objs: []runtime.Object{recorded(t, web(auto, "true", LastReload, syncNow.Add(-20*time.Second).Format(time.RFC3339Nano)), before), after},
			check: func(t *testing.T, r result) {
				if r.requeueAfter != 40*time.Second {
					t.Errorf("requeue after %s, want 40s", r.requeueAfter)
				}
			}},
		{name: "window: held until it opens, told once",
			objs:   []runtime.Object{recorded(t, web(auto, "true", "reloader.stakater.com/change-window", closed), before), after},
			events: []string{"OutsideChangeWindow"},
			check: func(t *testing.T, r result) {
				if r.requeueAfter <= time.Hour {
					t.Errorf("requeue after %s, want when the window opens", r.requeueAfter)
				}
			}},
		{name: "window that does not parse: held until fixed, the problem told",
			objs:   []runtime.Object{recorded(t, web(auto, "true", "reloader.stakater.com/change-window", "0 22 * * *"), before), after},
			events: []string{"ReloadFail"}},
		{name: "budget: a managed rollout going holds the only slot",
			o:      Options{Budget: budget.Options{Max: 1}},
			objs:   []runtime.Object{recorded(t, web(auto, "true"), before), other, after},
			events: []string{"RolloutWaiting"},
			check: func(t *testing.T, r result) {
				if r.requeueAfter != budgetRecheck {
					t.Errorf("requeue after %s, want the recheck %s", r.requeueAfter, budgetRecheck)
				}
			}},
		{name: "per key: a key the workload does not use changes nothing",
			o: Options{Options: decide.Options{UsedKeysOnly: true}},
			objs: []runtime.Object{recordedUnder(t, Options{Options: decide.Options{UsedKeysOnly: true}}, web(auto, "true"), before),
				func() *corev1.ConfigMap {
					cm := before.DeepCopy()
					cm.ResourceVersion = "11"
					cm.Data["unused"] = "x"
					return cm
				}()}},
		{name: "stale: a view older than the one applied writes nothing",
			objs: []runtime.Object{recorded(t, web(auto, "true"), after), func() *corev1.ConfigMap { cm := before.DeepCopy(); cm.ResourceVersion = "9"; return cm }()},
			check: func(t *testing.T, r result) {
				if !r.waiting {
					t.Error("a stale view must wait for the caches")
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.o, tc.objs...)
			r := f.sync("web")
			if got := f.writes(); fmt.Sprint(got) != fmt.Sprint(tc.writes) {
				t.Errorf("writes %v, want %v", got, tc.writes)
			}
			if got := f.reasons(); fmt.Sprint(got) != fmt.Sprint(tc.events) {
				t.Errorf("Events %v, want %v", got, tc.events)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

// paused is d paused by this controller a minute ago.
func paused(d *appsv1.Deployment) *appsv1.Deployment {
	d.Spec.Paused = true
	d.Annotations["deployment.reloader.stakater.com/paused-at"] = syncNow.Add(-time.Minute).Format(time.RFC3339)
	return d
}

// A first record whose turn comes while reloads are being written steps
// aside: the sync writes nothing and comes back in the background lane.
func TestSyncPacesAnAdoptionBehindTheReloadsInFlight(t *testing.T) {
	f := newFixture(t, Options{}, web(auto, "true"), configMap("v1"))
	f.c.busy = busy.New(busy.Options{Settle: 50 * time.Millisecond, MaxHold: time.Minute, Now: func() time.Time { return syncNow }})
	f.c.adoption.busy = f.c.busy
	end := f.c.busy.Begin()
	defer end()
	r := f.sync("web")
	if w := f.writes(); len(w) != 0 || r.recordAfter != 50*time.Millisecond || !r.adopted {
		t.Fatalf("writes %v, result %+v: want nothing written, the record back after the settle time (50ms)", w, r)
	}
}

// An object enters the informer's index before the workload handler runs
// its Add, so a ConfigMap changed right after a Deployment's creation can
// enqueue the Deployment first. That sync must wait for the Add, which
// records the birth: judged without it, the change was adopted as the
// baseline and lost (about once in 50 under -race in
// TestChangeRightAfterCreationIsNeverLost). With the birth, the first
// sight of a change made after the creation rolls it.
func TestSyncBeforeTheWorkloadsAddWaitsForItThenRollsTheChange(t *testing.T) {
	created := syncNow.Add(-time.Minute)
	d := web(auto, "true")
	d.CreationTimestamp, d.ResourceVersion = metav1.NewTime(created), "100"
	cm := configMap("after")
	cm.ResourceVersion = "101"
	cm.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate,
		Time: &metav1.Time{Time: created.Add(time.Second)}, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:k":{}}}`)}}
	f := newFixture(t, Options{}, d, cm)
	key := workload.Key{Kind: workload.Deployment, Namespace: "apps", Name: "web"}
	f.c.keys.onDeleted(key, d.UID) // not delivered yet

	if r := f.sync("web"); !r.waiting || len(f.writes()) != 0 {
		t.Fatalf("the sync before the Deployment's Add returned %+v and wrote %v, want it to wait and write nothing", r, f.writes())
	}
	h := &eventHandlers{o: &f.c.o, cache: f.c.cache, queue: f.c.queue, keys: f.c.keys, report: f.c.report, ready: &f.c.ready}
	h.workload(workload.Deployment).OnAdd(d, false)
	if r := f.sync("web"); !r.reloaded {
		t.Fatalf("after the Add the sync returned %+v (writes %v), want the change made after the creation rolled", r, f.writes())
	}
}

package controller_test

// What the fault suite watches from the test's side: the values a
// workload's template (or record) takes, in the order the apiserver commits
// them, and the checks that they only ever move forward.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// versionData is what version i of every test ConfigMap holds.
func versionData(i int) map[string]string { return map[string]string{"v": fmt.Sprint(i)} }

// templateLog follows, from the test's side, one value of every object of a
// resource in a namespace as the apiserver commits it (a Deployment's reload
// variable, a declared kind's, a notify-only workload's record): one watch,
// resumed from its last resourceVersion across apiserver restarts. Only a
// compacted history (410 Gone) makes it list again, which can skip a value
// but never invent one: a rollback it reports happened.
type templateLog struct {
	ns      string
	gvr     schema.GroupVersionResource
	value   func(*unstructured.Unstructured) string
	mu      sync.Mutex
	values  map[string][]string // object -> values it took, in order
	relists int
}

// followTemplates follows the reload variable of every Deployment in ns.
func followTemplates(t *testing.T, ns string) *templateLog {
	t.Helper()
	return followValues(t, ns, appsv1.SchemeGroupVersion.WithResource("deployments"), func(u *unstructured.Unstructured) string {
		var d appsv1.Deployment
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
			return "unreadable: " + err.Error()
		}
		v, _ := reloadertest.EnvOf(&d, "app", controller.EnvVarName(refs.ConfigMap, d.Name))
		return v
	})
}

// followValues follows value of every object of gvr in ns.
func followValues(t *testing.T, ns string, gvr schema.GroupVersionResource, value func(*unstructured.Unstructured) string) *templateLog {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Admin)
	if err != nil {
		t.Fatal(err)
	}
	api := dyn.Resource(gvr).Namespace(ns)
	ctx, cancel := context.WithCancel(context.Background())
	tl := &templateLog{ns: ns, gvr: gvr, value: value, values: map[string][]string{}}
	rv, err := tl.list(ctx, api)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			tl.follow(ctx, api, rv)
			if ctx.Err() != nil {
				return
			}
			// The history it resumed from was compacted: list again.
			if rv, err = tl.list(ctx, api); err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			tl.mu.Lock()
			tl.relists++
			tl.mu.Unlock()
		}
	}()
	return tl
}

func (tl *templateLog) list(ctx context.Context, api dynamic.ResourceInterface) (string, error) {
	l, err := api.List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for i := range l.Items {
		tl.observe(&l.Items[i])
	}
	return l.GetResourceVersion(), nil
}

// follow watches from rv until the watch ends (ctx, or a 410 Gone).
func (tl *templateLog) follow(ctx context.Context, api dynamic.ResourceInterface, rv string) {
	w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return api.Watch(ctx, o)
		},
	})
	if err != nil {
		return
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added, watch.Modified:
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				tl.observe(u)
			}
		case watch.Error:
			return
		}
	}
}

func (tl *templateLog) observe(u *unstructured.Unstructured) {
	v := tl.value(u)
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if vs := tl.values[u.GetName()]; len(vs) == 0 || vs[len(vs)-1] != v {
		tl.values[u.GetName()] = append(vs, v)
	}
}

// check holds the suite's guarantees for every Deployment in names, whose
// ConfigMap was written with versions 1..last in that order: the template's
// values are versions it was written with, each newer than the one before
// (never back, never the same twice: no rollout without a new value), the
// last one the final version. It returns the rollouts and the rollbacks seen.
func (tl *templateLog) check(t *testing.T, names []string, last int) (rollouts, rollbacks int) {
	t.Helper()
	version := map[string]int{"": 0} // 0: no variable yet (adopted, never rolled)
	for i := 1; i <= last; i++ {
		version[hash.SHA1.ConfigMap(versionData(i), nil)] = i
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for _, n := range names {
		vs := tl.values[n]
		var seen []int
		for _, v := range vs {
			i, known := version[v]
			if !known {
				t.Errorf("%s: template took %q, the hash of no version written", n, v)
				continue
			}
			seen = append(seen, i)
		}
		back := 0
		for k := 1; k < len(seen); k++ {
			rollouts++
			if seen[k] <= seen[k-1] {
				back++
			}
		}
		if back > 0 {
			rollbacks += back
			shown := fmt.Sprint(seen)
			if len(seen) > 16 {
				shown = fmt.Sprintf("%v ... %v", seen[:12], seen[len(seen)-4:])
			}
			t.Errorf("%s rolled back %d times: its template took versions %s, in that order", n, back, shown)
		}
		if len(seen) == 0 || seen[len(seen)-1] != last {
			t.Errorf("%s ended on versions %v, want the final version %d", n, seen, last)
		}
	}
	return rollouts, rollbacks
}

// writeAll writes version i of every ConfigMap in names.
func writeAll(t *testing.T, cs kubernetes.Interface, ns string, names []string, i int) {
	t.Helper()
	for _, n := range names {
		updateConfigMapData(t, cs, ns, n, versionData(i))
	}
}

// waitAllOn waits until every object in names carries version i. If they
// never get there, what they went through is the finding: it is checked
// (and rollbacks named) before the test stops.
func (tl *templateLog) waitAllOn(t *testing.T, names []string, i int) {
	t.Helper()
	want := hash.SHA1.ConfigMap(versionData(i), nil)
	dyn, err := dynamic.NewForConfig(cp.Admin)
	if err != nil {
		t.Fatal(err)
	}
	var behind []string
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := dyn.Resource(tl.gvr).Namespace(tl.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		on := map[string]bool{}
		for i := range l.Items {
			on[l.Items[i].GetName()] = tl.value(&l.Items[i]) == want
		}
		behind = behind[:0]
		for _, n := range names {
			if !on[n] {
				behind = append(behind, n)
			}
		}
		return len(behind) == 0, nil
	})
	if err != nil {
		rollouts, rollbacks := tl.check(t, names, i)
		t.Fatalf("%s not on version %d after 60s: %s (%d rollouts, %d rollbacks so far)", tl.gvr.Resource, i, strings.Join(behind, ","), rollouts, rollbacks)
	}
}

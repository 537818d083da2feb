package controller

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/reloader-dev/reloader/controller/cache"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/workload"
)

// reloader_workqueue_latency_seconds is the time a key waited in the queue
// each time, even for workloads whose sync returns early (here: not opted
// in), which leave no state behind to measure from.
func TestQueueLatencyIsTheWaitOfEachAdd(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	reg := prometheus.NewRegistry()
	o := Options{
		Namespaces: []string{"apps"},
		Metrics:    metrics.New(reg, metrics.Options{}),
		Recorder:   record.NewFakeRecorder(10),
		Now:        func() time.Time { return now },
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps"}}
	caches, err := cache.FromObjects(o.CacheOptions(), []any{d})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(fake.NewClientset(), caches, o)
	if err != nil {
		t.Fatal(err)
	}
	key := workload.Key{Kind: workload.Deployment, Namespace: "apps", Name: "web"}
	ctx := context.Background()

	c.queue.background(key)
	now = now.Add(2 * time.Second)
	c.processNext(ctx)

	// An hour later the workload changes again and waits 100ms.
	now = now.Add(time.Hour)
	c.queue.background(key)
	now = now.Add(100 * time.Millisecond)
	c.processNext(ctx)

	count, sum := histogram(t, reg, "reloader_workqueue_latency_seconds")
	if count != 2 {
		t.Fatalf("%d observations, want 2", count)
	}
	if want := 2.1; sum < want-1e-9 || sum > want+1e-9 {
		t.Fatalf("total latency %.3fs, want %.1fs (2s + 100ms): a wait was measured from an older add", sum, want)
	}
}

func histogram(t *testing.T, reg *prometheus.Registry, name string) (uint64, float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum()
		}
	}
	t.Fatalf("no histogram %s", name)
	return 0, 0
}

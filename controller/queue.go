package controller

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"

	"github.com/reloader-dev/reloader/controller/internal/lanes"
	"github.com/reloader-dev/reloader/controller/workload"
)

// depthOnly gives the workqueue our depth gauge, which it moves under its
// own lock as items enter and leave it: setting the gauge from the queue's
// length after the fact raced between goroutines and could leave it above an
// empty queue. The queue's other metrics are ours already, or not kept.
type depthOnly struct{ depth prometheus.Gauge }

func (d depthOnly) NewDepthMetric(string) workqueue.GaugeMetric          { return d.depth }
func (depthOnly) NewAddsMetric(string) workqueue.CounterMetric           { return noMetric{} }
func (depthOnly) NewLatencyMetric(string) workqueue.HistogramMetric      { return noMetric{} }
func (depthOnly) NewWorkDurationMetric(string) workqueue.HistogramMetric { return noMetric{} }
func (depthOnly) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noMetric{}
}
func (depthOnly) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noMetric{}
}
func (depthOnly) NewRetriesMetric(string) workqueue.CounterMetric { return noMetric{} }

type noMetric struct{}

func (noMetric) Inc()            {}
func (noMetric) Dec()            {}
func (noMetric) Set(float64)     {}
func (noMetric) Observe(float64) {}

// DefaultWorkers is the number of concurrent syncs by default. A sync
// blocks only on its one PATCH, so workers bound the writes in flight, not
// CPU; etcd commits concurrent writes in one batch. A burst of 200 changes
// took 1.70x the bench floor's time with 4 workers, 1.26x with 16 and 1.12x
// with 64 (bench/controller, full profile, 2026-12-06). The client rate
// limit (--kube-api-qps) and the apiserver's priority and fairness still
// bound a larger storm.
const DefaultWorkers = 64

// workQueue is the controller's workqueue: client-go's rate-limited,
// delaying queue, in the order lanes gives (changes ahead of adoption and
// retries), with the bookkeeping of when each key's first pending event
// came (keyStates).
type workQueue struct {
	workqueue.TypedRateLimitingInterface[workload.Key]
	lanes *lanes.Queue[workload.Key]
	keys  *keyStates
	adds  prometheus.Counter
	now   func() time.Time
}

func newWorkQueue(keys *keyStates, depth prometheus.Gauge, adds prometheus.Counter, now func() time.Time) *workQueue {
	l := lanes.New[workload.Key](lanes.DefaultBurst)
	base := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[workload.Key]{
		Name: "reloader", MetricsProvider: depthOnly{depth}, Queue: l,
	})
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[workload.Key](),
		workqueue.TypedRateLimitingQueueConfig[workload.Key]{
			DelayingQueue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[workload.Key]{Queue: base}),
		})
	return &workQueue{TypedRateLimitingInterface: q, lanes: l, keys: keys, adds: adds, now: now}
}

// background adds a workload key for background work (adoption at
// start-up), remembering when its first pending event came (for
// reloader_action_latency_seconds).
func (q *workQueue) background(key workload.Key) {
	q.keys.onEvent(key, q.now())
	q.Add(key)
	q.adds.Inc()
}

// change adds a workload key because something it uses, or the workload
// itself, changed: it goes ahead of background work.
func (q *workQueue) change(key workload.Key) {
	q.lanes.Urgent(key)
	q.background(key)
}

// urgentAfter brings key back after d ahead of background work: a held
// reload is due when it comes back.
func (q *workQueue) urgentAfter(key workload.Key, d time.Duration) {
	q.lanes.Urgent(key)
	if d > 0 {
		q.AddAfter(key, d)
	} else {
		q.Add(key)
	}
}

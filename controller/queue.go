package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/util/workqueue"

	"github.com/reloader-dev/reloader/controller/lanes"
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

// newQueue is the controller's workqueue: client-go's rate-limited,
// delaying queue, in the order lanes gives (changes first).
func newQueue(depth prometheus.Gauge) (workqueue.TypedRateLimitingInterface[workload.Key], *lanes.Queue[workload.Key]) {
	l := lanes.New[workload.Key](lanes.DefaultBurst)
	base := workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[workload.Key]{
		Name: "reloader", MetricsProvider: depthOnly{depth}, Queue: l,
	})
	q := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[workload.Key](),
		workqueue.TypedRateLimitingQueueConfig[workload.Key]{
			DelayingQueue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[workload.Key]{Queue: base}),
		})
	return q, l
}

// enqueue adds a workload key for background work (adoption at start-up),
// remembering when its first pending event came (for
// reloader_action_latency_seconds).
func (c *Controller) enqueue(key workload.Key) {
	c.keys.onEvent(key, c.o.Now())
	c.queue.Add(key)
	c.o.Metrics.QueueAdds.Inc()
}

// enqueueChange adds a workload key because something it uses, or the
// workload itself, changed: it goes ahead of background work.
func (c *Controller) enqueueChange(key workload.Key) {
	c.lanes.Urgent(key)
	c.enqueue(key)
}

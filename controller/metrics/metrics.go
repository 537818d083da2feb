// Package metrics defines the controller's Prometheus metrics, with
// stakater/Reloader's names and labels so existing dashboards and alerts keep
// working. Label values are kinds, namespaces and reasons, never resource
// contents.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Collectors are the controller's metrics.
type Collectors struct {
	Reloaded            *prometheus.CounterVec
	ReloadedByNamespace *prometheus.CounterVec
	ReconcileTotal      *prometheus.CounterVec
	ReconcileDuration   *prometheus.HistogramVec
	ActionTotal         *prometheus.CounterVec
	ActionLatency       *prometheus.HistogramVec
	SkippedTotal        *prometheus.CounterVec
	QueueDepth          prometheus.Gauge
	QueueAdds           prometheus.Counter
	QueueLatency        prometheus.Histogram
	ErrorsTotal         *prometheus.CounterVec
	RetriesTotal        prometheus.Counter
	EventsReceived      *prometheus.CounterVec
	EventsProcessed     *prometheus.CounterVec
	WorkloadsScanned    *prometheus.CounterVec
	WorkloadsMatched    *prometheus.CounterVec
	InvalidAnnotations  *prometheus.CounterVec
	CacheSynced         prometheus.Gauge
	Coalesced           prometheus.Counter

	countByNamespace bool
}

// Options configure the collectors.
type Options struct {
	// CountByNamespace enables reloader_reload_executed_total_by_namespace
	// (the original's METRICS_COUNT_BY_NAMESPACE=enabled); off by default
	// because namespaces multiply series.
	CountByNamespace bool
}

// New creates the collectors and registers them with reg.
func New(reg prometheus.Registerer, o Options) *Collectors {
	const ns = "reloader"
	c := &Collectors{
		countByNamespace: o.CountByNamespace,
		Reloaded: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "reload_executed_total",
			Help: "Counter of reloads executed by Reloader."}, []string{"success"}),
		ReloadedByNamespace: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "reload_executed_total_by_namespace",
			Help: "Counter of reloads executed by Reloader by namespace."}, []string{"success", "namespace"}),
		ReconcileTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "reconcile_total",
			Help: "Total number of reconcile/handler invocations by result."}, []string{"result"}),
		ReconcileDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "reconcile_duration_seconds",
			Help:    "Time spent in reconcile/handler in seconds.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}}, []string{"result"}),
		ActionTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "action_total",
			Help: "Total number of reload actions by workload kind and result."}, []string{"workload_kind", "result"}),
		ActionLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Name: "action_latency_seconds",
			Help:    "Time from event received to action applied in seconds.",
			Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}}, []string{"workload_kind"}),
		SkippedTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "skipped_total",
			Help: "Total number of skipped operations by reason."}, []string{"reason"}),
		QueueDepth: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "workqueue_depth",
			Help: "Current depth of the work queue."}),
		QueueAdds: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "workqueue_adds_total",
			Help: "Total number of items added to the work queue."}),
		QueueLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "workqueue_latency_seconds",
			Help:    "Time spent in the work queue in seconds.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}}),
		ErrorsTotal: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "errors_total",
			Help: "Total number of errors by type."}, []string{"type"}),
		RetriesTotal: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "retries_total",
			Help: "Total number of retry attempts."}),
		EventsReceived: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "events_received_total",
			Help: "Total number of events received by type and resource."}, []string{"event_type", "resource_type"}),
		EventsProcessed: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "events_processed_total",
			Help: "Total number of events processed by type, resource, and result."}, []string{"event_type", "resource_type", "result"}),
		WorkloadsScanned: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "workloads_scanned_total",
			Help: "Total number of workloads scanned by kind."}, []string{"kind"}),
		WorkloadsMatched: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "workloads_matched_total",
			Help: "Total number of workloads matched for reload by kind."}, []string{"kind"}),
		InvalidAnnotations: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "invalid_annotations_total",
			Help: "Invalid reload annotations found on workloads or resources, by workload kind."}, []string{"workload_kind"}),
		CacheSynced: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "cache_synced",
			Help: "1 once every informer cache has synced."}),
		Coalesced: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "reload_coalesced_total",
			Help: "Reloads deferred by the minimum reload interval; their changes are applied together by a later reload."}),
	}
	reg.MustRegister(c.Reloaded, c.ReconcileTotal, c.ReconcileDuration, c.ActionTotal, c.ActionLatency,
		c.SkippedTotal, c.QueueDepth, c.QueueAdds, c.QueueLatency, c.ErrorsTotal, c.RetriesTotal, c.EventsReceived,
		c.EventsProcessed, c.WorkloadsScanned, c.WorkloadsMatched, c.InvalidAnnotations, c.CacheSynced, c.Coalesced)
	if o.CountByNamespace {
		reg.MustRegister(c.ReloadedByNamespace)
	}
	return c
}

// RecordReload counts one reload attempt.
func (c *Collectors) RecordReload(success bool, namespace string) {
	s := "false"
	if success {
		s = "true"
	}
	c.Reloaded.WithLabelValues(s).Inc()
	if c.countByNamespace {
		c.ReloadedByNamespace.WithLabelValues(s, namespace).Inc()
	}
}

// RecordAction counts an action and its latency from the triggering event.
func (c *Collectors) RecordAction(kind, result string, latency time.Duration) {
	c.ActionTotal.WithLabelValues(kind, result).Inc()
	if latency > 0 {
		c.ActionLatency.WithLabelValues(kind).Observe(latency.Seconds())
	}
}

// RecordReconcile counts one sync and its duration.
func (c *Collectors) RecordReconcile(result string, d time.Duration) {
	c.ReconcileTotal.WithLabelValues(result).Inc()
	c.ReconcileDuration.WithLabelValues(result).Observe(d.Seconds())
}

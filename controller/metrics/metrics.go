// Package metrics defines the controller's Prometheus metrics, with
// stakater/Reloader's names, labels and label values so existing dashboards
// and alerts keep working, and the client-go request metrics
// (rest_client_requests_total, rest_client_request_duration_seconds) it
// exposes. Label values are kinds, namespaces and reasons, never resource
// contents.
package metrics

import (
	"context"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientmetrics "k8s.io/client-go/tools/metrics"
)

// Label values of the original, so its dashboards' matchers keep matching.
const (
	// SkipIgnored: a ConfigMap or Secret event in an ignored or unselected namespace.
	SkipIgnored = "ignored_or_not_selected"
	// SkipNoDataChange: an update that did not change the data.
	SkipNoDataChange = "no_data_change"
	// SkipStrategyNotUpdated: a reload found nothing to update in the
	// workload (no container uses the resource).
	SkipStrategyNotUpdated = "strategy_not_updated"

	ResultSuccess = "success"
	ResultError   = "error"
	ResultSkipped = "skipped"

	// ErrorHandler is every failed sync (reloader_errors_total{type}).
	ErrorHandler = "handler_error"

	// EventUnknown is the event_type of reloader_events_processed_total: the
	// original records it after the event type is gone.
	EventUnknown = "unknown"
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
	// Syncs counts every workload sync (ours): reloader_reconcile_total
	// counts, as in the original, only the handling of changes.
	Syncs *prometheus.CounterVec
	// OptionalAPIAvailable is 1 per optional API asked for (argo-rollouts,
	// secrets-store-csi) once the apiserver serves it and it is watched.
	OptionalAPIAvailable *prometheus.GaugeVec
	// RolloutsWaiting and RolloutsInProgress are the rollout budget
	// (--max-concurrent-rollouts): due reloads waiting for a slot, and the
	// rollouts holding one when a reload was last decided.
	RolloutsWaiting, RolloutsInProgress prometheus.Gauge
	// RolloutsHeld counts the reloads the budget held back, once each.
	RolloutsHeld prometheus.Counter
	// RolloutsStalled counts the rollouts the controller started that
	// passed their deadline and gave back their slot, once each.
	RolloutsStalled prometheus.Counter
	// PauseOutlived counts pauses without paused-at that outlived their
	// pause period, by whether the controller resumed them (its own).
	PauseOutlived *prometheus.CounterVec
	// WindowDeferred counts reloads held for their change window, once per
	// change.
	WindowDeferred prometheus.Counter
	// StaleViews counts decisions not written because the caches held an
	// older version of a resource than the one already applied (another
	// writer is ahead); WritesFenced the writes an HA replica held back
	// because its lease renewal was overdue.
	StaleViews, WritesFenced prometheus.Counter
	// AwaitingApproval is 1 per resource of each change waiting for a
	// person's approval (decide.ApprovalRequired), naming the change: its
	// identifier, the resource, hash prefixes and the field manager of the
	// write that changed it. The series goes when the change is applied,
	// superseded or no longer due. Notified counts the changes announced
	// and not applied (decide.ApprovalNotifyOnly), by workload kind.
	AwaitingApproval *prometheus.GaugeVec
	Notified         *prometheus.CounterVec

	countByNamespace bool
}

// Options configure the collectors.
type Options struct {
	// CountByNamespace enables reloader_reload_executed_total_by_namespace
	// (the original's METRICS_COUNT_BY_NAMESPACE=enabled); off by default
	// because namespaces multiply series.
	CountByNamespace bool
}

// New creates the collectors and registers them with reg: one declaration
// per metric, which is clearer as a list than split.
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
		Syncs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "workload_syncs_total",
			Help: "Workload syncs by result (success, requeue, error), including those that found the workload up to date."}, []string{"result"}),
		OptionalAPIAvailable: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "optional_api_available",
			Help: "1 when an optional API the flags ask for is served and watched, 0 while the apiserver does not serve it."}, []string{"api"}),
		RolloutsWaiting: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "rollouts_waiting",
			Help: "Due reloads waiting for a rollout slot (--max-concurrent-rollouts)."}),
		RolloutsInProgress: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "rollouts_in_progress",
			Help: "Rollouts the controller started, of Deployments, StatefulSets and DaemonSets it manages, holding a slot of the rollout budget when a reload was last decided."}),
		RolloutsHeld: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "rollouts_held_total",
			Help: "Reloads the rollout budget held back until a slot freed, counted once per reload."}),
		RolloutsStalled: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "rollouts_stalled_total",
			Help: "Rollouts the controller started that passed their deadline (a Deployment's progressDeadlineSeconds, --rollout-deadline for StatefulSets and DaemonSets) and gave back their rollout slot, counted once per rollout."}),
		WindowDeferred: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "reload_window_deferred_total",
			Help: "Reloads due outside their change window, held until it opens; counted once per change."}),
		PauseOutlived: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "pause_outlived_total",
			Help: "Paused Deployments without a paused-at annotation whose pause outlived their pause period, by whether the controller resumed them (only its own pauses)."}, []string{"resumed"}),
		StaleViews: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "stale_views_total",
			Help: "Syncs that wrote nothing because the caches held an older version of a ConfigMap or Secret than the one already applied to the workload (another writer was ahead); each is made again when the caches catch up."}),
		WritesFenced: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "writes_fenced_total",
			Help: "Writes an HA replica held back because its last lease renewal was older than the renew deadline (it cannot know it still leads)."}),
		AwaitingApproval: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Name: "reload_awaiting_approval",
			Help: "1 per resource of a due change waiting for approval (reloader.stakater.com/approval: required): the change to approve with reloader.stakater.com/approve, the resource, the prefixes of its applied and new hash, and the field manager of the write that changed it."},
			[]string{"namespace", "workload_kind", "workload", "change", "resource", "old_hash", "new_hash", "changed_by"}),
		Notified: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "reload_notified_total",
			Help: "Due changes announced and not applied (reloader.stakater.com/approval: notify-only), by workload kind; counted once per change."}, []string{"workload_kind"}),
	}
	reg.MustRegister(c.Reloaded, c.ReconcileTotal, c.ReconcileDuration, c.ActionTotal, c.ActionLatency,
		c.SkippedTotal, c.QueueDepth, c.QueueAdds, c.QueueLatency, c.ErrorsTotal, c.RetriesTotal, c.EventsReceived,
		c.EventsProcessed, c.WorkloadsScanned, c.WorkloadsMatched, c.InvalidAnnotations, c.CacheSynced, c.Coalesced, c.Syncs, c.OptionalAPIAvailable,
		c.RolloutsWaiting, c.RolloutsInProgress, c.RolloutsHeld, c.RolloutsStalled, c.PauseOutlived, c.WindowDeferred, c.StaleViews, c.WritesFenced,
		c.AwaitingApproval, c.Notified)
	if o.CountByNamespace {
		reg.MustRegister(c.ReloadedByNamespace)
	}
	// The original exports both series from the start, so rate() and
	// absent() work before the first reload.
	c.Reloaded.WithLabelValues("true").Add(0)
	c.Reloaded.WithLabelValues("false").Add(0)
	return c
}

// ClientGo is client-go's request metrics under the original's names,
// labels and buckets: rest_client_requests_total{code,method,host} and
// rest_client_request_duration_seconds{verb,host}.
type ClientGo struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

// NewClientGo creates the client-go request metrics and registers them with
// reg. Install hands them to client-go.
func NewClientGo(reg prometheus.Registerer) *ClientGo {
	m := &ClientGo{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "rest_client_requests_total",
			Help: "Number of HTTP requests, partitioned by status code, method, and host."}, []string{"code", "method", "host"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rest_client_request_duration_seconds",
			Help:    "Request latency in seconds. Broken down by verb and host.",
			Buckets: []float64{0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30}}, []string{"verb", "host"}),
	}
	reg.MustRegister(m.requests, m.latency)
	return m
}

// Install makes client-go report every request to m. client-go keeps one
// set of request metrics per process and takes the first registered, so
// call it once, before any client is used.
func (m *ClientGo) Install() {
	clientmetrics.Register(clientmetrics.RegisterOpts{RequestResult: m, RequestLatency: m})
}

// Increment implements client-go's ResultMetric.
func (m *ClientGo) Increment(_ context.Context, code, method, host string) {
	m.requests.WithLabelValues(code, method, host).Inc()
}

// Observe implements client-go's LatencyMetric.
func (m *ClientGo) Observe(_ context.Context, verb string, u url.URL, latency time.Duration) {
	m.latency.WithLabelValues(verb, u.Host).Observe(latency.Seconds())
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

// RecordSkipped counts an operation skipped for reason (Skip*).
func (c *Collectors) RecordSkipped(reason string) {
	c.SkippedTotal.WithLabelValues(reason).Inc()
}

// RecordReconcile counts one reconcile and its duration; result is one of
// ResultSuccess, ResultError, ResultSkipped.
func (c *Collectors) RecordReconcile(result string, d time.Duration) {
	c.ReconcileTotal.WithLabelValues(result).Inc()
	c.ReconcileDuration.WithLabelValues(result).Observe(d.Seconds())
}

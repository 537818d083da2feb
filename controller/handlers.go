package controller

import (
	"maps"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/cache"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/report"
	"github.com/reloader-dev/reloader/controller/workload"
)

// eventHandlers turn the caches' events into workload keys on the queue;
// every decision is the sync's. They also keep what only an event can tell:
// a workload's birth, and the metrics the original counts per event.
type eventHandlers struct {
	o      *Options
	cache  *cache.Cache
	queue  *workQueue
	keys   *keyStates
	report *report.Reporter
	budget *budgetGate
	// ready: the caches have synced; events before are the initial list.
	ready *atomic.Bool
}

func (h *eventHandlers) all() cache.Handlers {
	return cache.Handlers{Workload: h.workload, Config: h.config, ClassContent: h.classContent, Namespace: h.namespace()}
}

func (h *eventHandlers) workload(workload.Kind) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			v, err := workload.ViewOf(obj)
			if err != nil || h.o.NamespaceIgnored(v.Object.GetNamespace()) {
				return
			}
			var b *decide.Birth
			if !isInInitialList {
				b = &decide.Birth{UID: v.Object.GetUID(), ResourceVersion: v.Object.GetResourceVersion()}
			}
			// Before the enqueue: the sync this Add asks for finds it.
			h.keys.onAdd(v.Key(), v.Object.GetUID(), b)
			if isInInitialList {
				h.queue.background(v.Key()) // adoption
			} else {
				h.queue.change(v.Key())
			}
		},
		UpdateFunc: func(old, cur any) {
			o, err1 := workload.ViewOf(old)
			n, err2 := workload.ViewOf(cur)
			if err1 != nil || err2 != nil || h.o.NamespaceIgnored(n.Object.GetNamespace()) {
				return
			}
			h.budget.observe(old, cur)
			// Status-only updates (the bulk of workload traffic) cannot change
			// what the workload uses or what was applied to it.
			if o.Object.GetGeneration() == n.Object.GetGeneration() &&
				maps.Equal(o.Object.GetAnnotations(), n.Object.GetAnnotations()) &&
				o.Object.GetDeletionTimestamp().Equal(n.Object.GetDeletionTimestamp()) {
				return
			}
			h.queue.change(n.Key())
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if v, err := workload.ViewOf(obj); err == nil {
				h.keys.onDeleted(v.Key(), v.Object.GetUID())
				h.report.Forget(v.Key())
			}
		},
	}
}

// config handles a ConfigMap's, Secret's or SecretProviderClass's own
// events. Its metrics count events as the original does: every event is
// received; an update (an add with --reload-on-create, a delete with
// --reload-on-delete) in an ignored or unselected namespace is skipped; an
// update without a data change is a skipped reconcile; any other is
// processed, scanning the namespace's workloads. Its three handlers share
// the counting closures, hence one function.
func (h *eventHandlers) config(kind refs.Kind) toolscache.ResourceEventHandler {
	if kind == refs.SecretProviderClass {
		return h.class()
	}
	resourceType := kind.Plural()
	m := h.o.Metrics
	counted := func(obj metav1.Object, enabled bool) bool {
		if !enabled || !h.ready.Load() {
			return false // the initial list, or an event type the user did not ask to act on
		}
		if h.o.NamespaceIgnored(obj.GetNamespace()) || !h.o.namespaceSelected(h.cache, obj.GetNamespace()) {
			m.RecordSkipped(metrics.SkipIgnored)
			return false
		}
		return true
	}
	handle := func(obj metav1.Object, count, searchToo bool) {
		n := h.changed(kind, obj.GetNamespace(), obj.GetName(), searchToo)
		if !count {
			return
		}
		m.EventsProcessed.WithLabelValues(metrics.EventUnknown, resourceType, metrics.ResultSuccess).Inc()
		h.recordScan(obj.GetNamespace())
		if n == 0 {
			// Nothing uses it: handled here. Otherwise each workload's sync
			// is the reconcile.
			m.RecordReconcile(metrics.ResultSuccess, 0)
		}
	}
	match := func(o metav1.Object) bool { return o.GetAnnotations()[h.o.Names.Match] != "" }
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			m.EventsReceived.WithLabelValues("add", resourceType).Inc()
			o := cache.MetaOf(obj)
			if !isInInitialList {
				h.reportNotNamed(kind, o, "created")
			}
			handle(o, counted(o, h.o.ReloadOnCreate), match(o))
		},
		UpdateFunc: func(old, cur any) {
			m.EventsReceived.WithLabelValues("update", resourceType).Inc()
			o, n := cache.MetaOf(old), cache.MetaOf(cur)
			count := counted(n, true)
			if cache.HashOf(old) == cache.HashOf(cur) && !h.triggersChanged(o, n) {
				// A label-only or no-op update: nothing a workload uses changed.
				if count {
					m.RecordReconcile(metrics.ResultSkipped, 0)
					m.RecordSkipped(metrics.SkipNoDataChange)
					m.EventsProcessed.WithLabelValues(metrics.EventUnknown, resourceType, metrics.ResultSuccess).Inc()
				}
				return
			}
			if cache.HashOf(old) != cache.HashOf(cur) {
				h.reportNotNamed(kind, n, "changed")
			}
			handle(n, count, match(n) || match(o))
		},
		DeleteFunc: func(obj any) {
			m.EventsReceived.WithLabelValues("delete", resourceType).Inc()
			o := cache.MetaOf(obj)
			h.reportNotNamed(kind, o, "deleted")
			handle(o, counted(o, h.o.ReloadOnDelete), match(o))
		},
	}
}

// class handles a SecretProviderClass's own object: only its annotations
// (ignore, match) matter; its content is what its mounts report
// (classContent).
func (h *eventHandlers) class() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(old, cur any) {
			o, n := cache.MetaOf(old), cache.MetaOf(cur)
			if h.triggersChanged(o, n) {
				h.changed(refs.SecretProviderClass, n.GetNamespace(), n.GetName(), true)
			}
		},
	}
}

func (h *eventHandlers) classContent(ns, class string) {
	h.o.Metrics.EventsReceived.WithLabelValues("update", "secretproviderclasspodstatuses").Inc()
	h.changed(refs.SecretProviderClass, ns, class, false)
}

// namespace re-syncs a namespace's workloads when its labels change (the
// namespace selector may now select it, or no longer).
func (h *eventHandlers) namespace() toolscache.ResourceEventHandler {
	changed := func(obj any) {
		ns, ok := obj.(*corev1.Namespace)
		if !ok {
			return
		}
		keys := h.cache.InNamespace(ns.Name)
		for _, key := range keys {
			h.queue.change(key)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: changed,
		UpdateFunc: func(old, cur any) {
			if !labels.Equals(old.(*corev1.Namespace).Labels, cur.(*corev1.Namespace).Labels) {
				changed(cur)
			}
		},
	}
}

func (h *eventHandlers) triggersChanged(o, n metav1.Object) bool {
	for _, k := range []string{h.o.Names.Ignore, h.o.Names.Match} {
		if o.GetAnnotations()[k] != n.GetAnnotations()[k] {
			return true
		}
	}
	return false
}

// changed enqueues every workload that may watch the resource and returns
// how many. Until the caches have synced, what it sees is the initial list,
// and what it enqueues is adoption (background work); after, a change.
func (h *eventHandlers) changed(kind refs.Kind, ns, name string, searchToo bool) int {
	if h.o.NamespaceIgnored(ns) {
		return 0
	}
	enqueue := h.queue.background
	if h.ready.Load() {
		enqueue = h.queue.change
	}
	n := 0
	for key := range h.cache.Watchers(kind, ns, name, searchToo) {
		enqueue(key)
		n++
	}
	return n
}

// recordScan counts the workloads of each kind in ns, as the original lists
// them for every change (reloader_workloads_scanned_total), and creates the
// matched series it adds 0 to.
func (h *eventHandlers) recordScan(ns string) {
	counts := h.cache.Counts(ns)
	for kind, n := range counts {
		h.o.Metrics.WorkloadsScanned.WithLabelValues(string(kind)).Add(float64(n))
		h.o.Metrics.WorkloadsMatched.WithLabelValues(string(kind)).Add(0)
	}
}

// reportNotNamed reports, for a ConfigMap or Secret that was created,
// changed or deleted, every workload that uses it in its pod spec and opted
// into reloading, but whose annotations do not select it (typed auto of the
// other kind, exclude list, search without match, ignore on the resource).
// It only reads the index; nothing is enqueued for it.
func (h *eventHandlers) reportNotNamed(kind refs.Kind, m metav1.Object, what string) {
	ns, name := m.GetNamespace(), m.GetName()
	if h.o.NamespaceIgnored(ns) {
		return
	}
	for v := range h.cache.Users(kind, ns, name) {
		w := annotations.Workload{Meta: v.Object.GetAnnotations(), Template: v.Template.Annotations}
		if !h.o.Names.Interested(w, h.o.AutoReloadAll) {
			continue
		}
		res := annotations.Resource{Kind: kind, Name: name, Annotations: m.GetAnnotations()}
		if h.o.Names.Decide(w, res, h.o.AutoReloadAll).Reload {
			continue
		}
		h.report.NotNamed(v, kind, name, what)
	}
}

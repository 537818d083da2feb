package controller

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// The event handlers only enqueue keys; every decision is the sync's.

func (c *Controller) workloadHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			v, err := workload.ViewOf(obj)
			if err != nil {
				return
			}
			if !c.ignoredNamespace(v.Object.GetNamespace()) {
				var b *decide.Birth
				if !isInInitialList {
					b = &decide.Birth{UID: v.Object.GetUID(), ResourceVersion: v.Object.GetResourceVersion()}
				}
				// Before the enqueue: the sync this Add asks for finds it.
				c.keys.onAdd(v.Key(), v.Object.GetUID(), b)
				if isInInitialList {
					c.enqueue(v.Key()) // adoption: background work
				} else {
					c.enqueueChange(v.Key())
				}
			}
		},
		UpdateFunc: func(old, cur any) {
			o, err1 := workload.ViewOf(old)
			n, err2 := workload.ViewOf(cur)
			if err1 != nil || err2 != nil || c.ignoredNamespace(n.Object.GetNamespace()) {
				return
			}
			if c.rolloutFinished(old, cur) {
				c.wakeWaiters()
			}
			// Status-only updates (the bulk of workload traffic) cannot change
			// what the workload uses or what was applied to it.
			if o.Object.GetGeneration() == n.Object.GetGeneration() &&
				maps.Equal(o.Object.GetAnnotations(), n.Object.GetAnnotations()) &&
				o.Object.GetDeletionTimestamp().Equal(n.Object.GetDeletionTimestamp()) {
				return
			}
			c.enqueueChange(n.Key())
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if v, err := workload.ViewOf(obj); err == nil {
				c.keys.onDeleted(v.Key(), v.Object.GetUID())
			}
		},
	}
}

// configHandler enqueues the workloads a ConfigMap or Secret event concerns.
// Its metrics count events as the original does: every event is received;
// an update (an add with --reload-on-create, a delete with
// --reload-on-delete) in an ignored or unselected namespace is skipped; an
// update without a data change is a skipped reconcile; any other is
// processed, scanning the namespace's workloads. Its three handlers share
// the counting closures, hence one function.
func (c *Controller) configHandler(kind refs.Kind) cache.ResourceEventHandler {
	resourceType := kind.Plural()
	counted := func(obj metav1.Object, enabled bool) bool {
		if !enabled || !c.ready.Load() {
			return false // the initial list, or an event type the user did not ask to act on
		}
		if c.ignoredNamespace(obj.GetNamespace()) || !c.namespaceSelected(obj.GetNamespace()) {
			c.o.Metrics.RecordSkipped(metrics.SkipIgnored)
			return false
		}
		return true
	}
	handle := func(obj metav1.Object, count, searchToo bool) {
		n := c.configChangedName(kind, obj.GetNamespace(), obj.GetName(), searchToo)
		if !count {
			return
		}
		c.o.Metrics.EventsProcessed.WithLabelValues(metrics.EventUnknown, resourceType, metrics.ResultSuccess).Inc()
		c.recordScan(obj.GetNamespace())
		if n == 0 {
			// Nothing uses it: handled here. Otherwise each workload's sync
			// is the reconcile.
			c.o.Metrics.RecordReconcile(metrics.ResultSuccess, 0)
		}
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			c.o.Metrics.EventsReceived.WithLabelValues("add", resourceType).Inc()
			m := metaOf(obj)
			if !isInInitialList {
				c.reportUnnamed(kind, m, "created")
			}
			handle(m, counted(m, c.o.ReloadOnCreate), m.GetAnnotations()[c.o.Names.Match] != "")
		},
		UpdateFunc: func(old, cur any) {
			c.o.Metrics.EventsReceived.WithLabelValues("update", resourceType).Inc()
			o, n := metaOf(old), metaOf(cur)
			count := counted(n, true)
			if cachedHash(old) == cachedHash(cur) && !c.triggerAnnotationsChanged(o, n) {
				// A label-only or no-op update: nothing a workload uses changed.
				if count {
					c.o.Metrics.RecordReconcile(metrics.ResultSkipped, 0)
					c.o.Metrics.RecordSkipped(metrics.SkipNoDataChange)
					c.o.Metrics.EventsProcessed.WithLabelValues(metrics.EventUnknown, resourceType, metrics.ResultSuccess).Inc()
				}
				return
			}
			if cachedHash(old) != cachedHash(cur) {
				c.reportUnnamed(kind, n, "changed")
			}
			handle(n, count, n.GetAnnotations()[c.o.Names.Match] != "" || o.GetAnnotations()[c.o.Names.Match] != "")
		},
		DeleteFunc: func(obj any) {
			c.o.Metrics.EventsReceived.WithLabelValues("delete", resourceType).Inc()
			m := metaOf(obj)
			c.reportUnnamed(kind, m, "deleted")
			handle(m, counted(m, c.o.ReloadOnDelete), m.GetAnnotations()[c.o.Names.Match] != "")
		},
	}
}

// recordScan counts the workloads of each kind in ns, as the original lists
// them for every change (reloader_workloads_scanned_total), and creates the
// matched series it adds 0 to.
func (c *Controller) recordScan(ns string) {
	s := c.scopeFor(ns)
	if s == nil {
		return
	}
	for kind, inf := range s.workloads {
		objs, _ := inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
		c.o.Metrics.WorkloadsScanned.WithLabelValues(string(kind)).Add(float64(len(objs)))
		c.o.Metrics.WorkloadsMatched.WithLabelValues(string(kind)).Add(0)
	}
}

func (c *Controller) triggerAnnotationsChanged(o, n metav1.Object) bool {
	for _, k := range []string{c.o.Names.Ignore, c.o.Names.Match} {
		if o.GetAnnotations()[k] != n.GetAnnotations()[k] {
			return true
		}
	}
	return false
}

// configChanged enqueues every workload that may watch the resource: those
// using it, those naming resources of its kind by pattern, and (searchToo,
// when the resource carries or carried the match annotation) those that search.
func (c *Controller) configChanged(kind refs.Kind, obj metav1.Object, searchToo bool) {
	c.configChangedName(kind, obj.GetNamespace(), obj.GetName(), searchToo)
}

// configChangedName returns how many workloads it enqueued. Until the caches
// have synced, what it sees is the initial list, and what it enqueues is
// adoption (background work); after, a change.
func (c *Controller) configChangedName(kind refs.Kind, ns, name string, searchToo bool) int {
	if c.ignoredNamespace(ns) {
		return 0
	}
	enqueue := c.enqueue
	if c.ready.Load() {
		enqueue = c.enqueueChange
	}
	s := c.scopeFor(ns)
	if s == nil {
		return 0
	}
	n := 0
	for wk, inf := range s.workloads {
		idx := inf.GetIndexer()
		var objs []any
		for _, q := range [][2]string{{indexRef, ns + "/" + string(kind) + "/" + name}, {indexNamed, ns + "/" + string(kind)}} {
			found, err := idx.ByIndex(q[0], q[1])
			if err == nil {
				objs = append(objs, found...)
			}
		}
		if searchToo {
			if found, err := idx.ByIndex(indexSearch, ns); err == nil {
				objs = append(objs, found...)
			}
		}
		for _, o := range objs {
			m := o.(metav1.Object)
			enqueue(workload.Key{Kind: wk, Namespace: m.GetNamespace(), Name: m.GetName()})
			n++
		}
	}
	return n
}

func (c *Controller) namespaceChanged(obj any) {
	ns := obj.(*corev1.Namespace).Name
	s := c.scopeFor(ns)
	if s == nil {
		return
	}
	for wk, inf := range s.workloads {
		objs, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
		if err != nil {
			continue
		}
		for _, o := range objs {
			c.enqueueChange(workload.Key{Kind: wk, Namespace: ns, Name: o.(metav1.Object).GetName()})
		}
	}
}

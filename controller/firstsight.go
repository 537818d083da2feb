package controller

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// The first-sight rule itself is decide's (decide/firstsight.go). Here is
// what the controller keeps for it: each workload's birth (keyState.born,
// from the workload handler), the last-write time of each cached resource
// (lastWrite, in the cache transform), and the handler-side reporting of
// changes not applied.

// lastWrite is when an object was last written, as far as its metadata
// tells: the newest managedFields entry, or its creation.
func lastWrite(m metav1.Object) time.Time {
	t := m.GetCreationTimestamp().Time
	for _, f := range m.GetManagedFields() {
		if f.Time != nil && f.Time.After(t) {
			t = f.Time.Time
		}
	}
	return t
}

// reportSkips logs and counts changes deliberately not applied, once the
// sync that decided them has been written (a retried sync does not count
// them twice).
func (c *Controller) reportSkips(v workload.View, skips []decide.Skip) {
	for _, s := range skips {
		c.o.Metrics.SkippedTotal.WithLabelValues(s.Reason).Inc()
		c.o.Logger.Info("change not applied", "workload", v.Key().String(), "resource", s.Kind.Title()+" "+s.Name,
			"reason", s.Reason, "detail", s.Detail())
	}
}

// reportUnnamed logs and counts, for a ConfigMap or Secret that was created,
// changed or deleted, every workload that uses it in its pod spec and opted
// into reloading, but whose annotations do not select it (typed auto of the
// other kind, exclude list, search without match, ignore on the resource).
// It only reads the index; nothing is enqueued for it.
func (c *Controller) reportUnnamed(kind refs.Kind, m metav1.Object, what string) {
	ns, name := m.GetNamespace(), m.GetName()
	if c.ignoredNamespace(ns) {
		return
	}
	s := c.scopeFor(ns)
	if s == nil {
		return
	}
	for _, inf := range s.workloads {
		objs, err := inf.GetIndexer().ByIndex(indexRef, ns+"/"+string(kind)+"/"+name)
		if err != nil {
			continue
		}
		for _, o := range objs {
			v, err := workload.ViewOf(o)
			if err != nil {
				continue
			}
			w := annotations.Workload{Meta: v.Object.GetAnnotations(), Template: v.Template.Annotations}
			if !c.o.Names.Interested(w, c.o.AutoReloadAll) {
				continue
			}
			d := c.o.Names.Decide(w, annotations.Resource{Kind: kind, Name: name, Annotations: m.GetAnnotations()}, c.o.AutoReloadAll)
			if d.Reload {
				continue
			}
			c.o.Metrics.SkippedTotal.WithLabelValues(decide.SkipNotNamed).Inc()
			c.o.Logger.Info("change not applied", "workload", v.Key().String(), "resource", kind.Title()+" "+name,
				"event", what, "reason", decide.SkipNotNamed, "detail", decide.SkipDetail(decide.SkipNotNamed))
		}
	}
}

// handlerDelivered reports whether the workload handler has run the Add of
// the incarnation v (same UID) the index holds.
func (c *Controller) handlerDelivered(key workload.Key, v workload.View) bool {
	uid := c.keys.read(key).delivered
	return uid != "" && uid == v.Object.GetUID()
}

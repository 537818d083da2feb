package controller

import (
	"encoding/json"
	"strings"
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
	t, _, _ := newestWrite(m)
	return t
}

// newestWrite is lastWrite with the field manager and operation of the
// write that made the content: the newest managedFields entry that owns
// data (data, binaryData, stringData), since a manager owns a field it last
// changed; "" when none does. managedFields times have one-second
// resolution and the apiserver orders entries by name within a second, so
// of two data owners written in the same second the first listed is named.
// The names are copied, so the cache never pins the decoded object's buffer
// through them.
func newestWrite(m metav1.Object) (t time.Time, manager, operation string) {
	t = m.GetCreationTimestamp().Time
	var at time.Time
	for _, f := range m.GetManagedFields() {
		if f.Time == nil {
			continue
		}
		if f.Time.After(t) {
			t = f.Time.Time
		}
		if ownsData(f.FieldsV1) && (manager == "" || f.Time.After(at)) {
			at, manager, operation = f.Time.Time, f.Manager, string(f.Operation)
		}
	}
	return t, strings.Clone(manager), strings.Clone(operation)
}

// ownsData reports whether a managedFields entry owns a key of a ConfigMap's
// or Secret's content (data, binaryData, stringData). Owning only the map
// itself (".") does not count: the creator keeps that after another manager
// has changed every key.
func ownsData(fs *metav1.FieldsV1) bool {
	if fs == nil {
		return false
	}
	var top map[string]map[string]json.RawMessage
	if err := json.Unmarshal(fs.GetRawBytes(), &top); err != nil {
		// Another field's shape (a list, a value) is not ours to read;
		// read the content fields alone.
		var loose map[string]json.RawMessage
		if json.Unmarshal(fs.GetRawBytes(), &loose) != nil {
			return false
		}
		top = map[string]map[string]json.RawMessage{}
		for _, k := range contentFields {
			var m map[string]json.RawMessage
			if raw, ok := loose[k]; ok && json.Unmarshal(raw, &m) == nil {
				top[k] = m
			}
		}
	}
	for _, k := range contentFields {
		for key := range top[k] {
			if key != "." {
				return true
			}
		}
	}
	return false
}

var contentFields = []string{"f:data", "f:binaryData", "f:stringData"}

// reportSkips logs and counts changes deliberately not applied, once the
// sync that decided them has been written (a retried sync does not count
// them twice).
func (c *Controller) reportSkips(v workload.View, skips []decide.Skip) {
	for _, s := range skips {
		c.o.Metrics.SkippedTotal.WithLabelValues(s.Reason).Inc()
		c.o.Logger.Info("change not applied", "workload", v.Key().String(), "resource", s.Kind.Title()+" "+s.Name,
			"reason", s.Reason, "detail", s.Detail())
	}
	c.auditSkips(v, skips)
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

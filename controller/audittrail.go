package controller

import (
	"sort"
	"strings"
	"sync"

	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// The audit trail (--audit-log) reports, per resource, what the controller
// did about a change: reloaded, deferred, skipped, sent to the webhook, or a
// refused write. It is written where the outcome is known (after the write),
// so a retried sync does not report a reload twice, and a deferral is
// reported once per held set of changes, not on every sync that finds it
// still held. The line names who made the write that changed the resource,
// read off the cache entry when it is still at the version decided on.

// changedBy is the write that made the cached resource's current version,
// or nil when the cache does not tell (no managedFields, or the cache has
// moved past rv, so its writer is not the one of the change decided on).
func (c *Controller) changedBy(kind refs.Kind, ns, name, rv string) *audit.Writer {
	obj, ok := c.config(kind, ns, name)
	if !ok {
		return nil
	}
	e, isEntry := obj.(*configEntry)
	if !isEntry || e.writer == "" || (rv != "" && e.resourceVersion != rv) {
		return nil
	}
	return &audit.Writer{Manager: e.writer, Operation: e.writeOp, Time: e.written}
}

// auditReloads writes one line per reload of v with decision dec.
func (c *Controller) auditReloads(v workload.View, rs []decide.Reload, dec audit.Decision, reason string) {
	if c.o.Audit == nil {
		return
	}
	key := v.Key()
	for _, r := range rs {
		why := reason
		if why == "" {
			why = r.Change.String()
		}
		rec := audit.Record{Time: c.o.Now(), Workload: auditObject(v),
			Resource:  audit.Resource{Kind: r.Kind.Title(), Name: r.Name, ResourceVersion: r.ResourceVersion},
			ChangedBy: c.changedBy(r.Kind, key.Namespace, r.Name, r.ResourceVersion),
			OldHash:   r.Baseline.Hash, NewHash: r.Hash, Strategy: string(c.o.Strategy), Decision: dec, Reason: why}
		c.writeAudit(rec)
	}
}

// auditSkips writes one line per change deliberately not applied.
func (c *Controller) auditSkips(v workload.View, skips []decide.Skip) {
	if c.o.Audit == nil {
		return
	}
	key := v.Key()
	for _, s := range skips {
		rec := audit.Record{Time: c.o.Now(), Workload: auditObject(v),
			Resource:  audit.Resource{Kind: s.Kind.Title(), Name: s.Name},
			ChangedBy: c.changedBy(s.Kind, key.Namespace, s.Name, ""),
			Strategy:  string(c.o.Strategy), Decision: audit.Skipped, Reason: s.Reason}
		if st := (cacheReader{c}).Resource(s.Kind, key.Namespace, s.Name); st.Exists {
			rec.Resource.ResourceVersion, rec.NewHash = st.ResourceVersion, st.Hash
		}
		c.writeAudit(rec)
	}
}

// auditDeferred reports reloads held (storm control) once per held set:
// the same changes found held again by a later sync are not repeated.
func (c *Controller) auditDeferred(v workload.View, rs []decide.Reload, reason string) {
	if c.o.Audit == nil {
		return
	}
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, r.Kind.Title()+"/"+r.Name+"@"+r.Hash)
	}
	sort.Strings(parts)
	if !c.deferred.changed(v.Key(), strings.Join(parts, ",")) {
		return
	}
	c.auditReloads(v, rs, audit.Deferred, reason)
}

func (c *Controller) writeAudit(rec audit.Record) {
	if err := c.o.Audit.Write(rec); err != nil {
		// stdout gone (a closed pipe) is not a reason to stop reloading;
		// the log says the trail has a gap.
		c.o.Logger.Error("audit trail", "workload", rec.Workload.Namespace+"/"+rec.Workload.Name, "err", err)
	}
}

func auditObject(v workload.View) audit.Object {
	key := v.Key()
	return audit.Object{Kind: string(v.Kind), Namespace: key.Namespace, Name: key.Name}
}

// changedByText is the Event's "(changed by ...)" suffix for the applied
// reloads: each distinct field manager of the writes that changed them, or
// "" when the cache does not tell.
func (c *Controller) changedByText(v workload.View, rs []decide.Reload) string {
	seen := map[string]bool{}
	var managers []string
	for _, r := range rs {
		if w := c.changedBy(r.Kind, v.Key().Namespace, r.Name, r.ResourceVersion); w != nil && !seen[w.Manager] {
			seen[w.Manager] = true
			managers = append(managers, w.Manager)
		}
	}
	if len(managers) == 0 {
		return ""
	}
	sort.Strings(managers)
	return " (changed by " + strings.Join(managers, ", ") + ")"
}

// deferrals is, per workload, the set of held changes last reported. An
// entry lives while its workload's changes are held: it is dropped when the
// workload reloads or leaves.
type deferrals struct {
	mu sync.Mutex
	m  map[workload.Key]string
}

// changed records text as key's held set and reports whether it differs
// from the one recorded before.
func (d *deferrals) changed(key workload.Key, text string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[workload.Key]string{}
	}
	if d.m[key] == text {
		return false
	}
	d.m[key] = text
	return true
}

func (d *deferrals) forget(key workload.Key) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.m, key)
}

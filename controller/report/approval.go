package report

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/reloader-dev/reloader/controller/alerts"
	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/workload"
)

// A person in the loop: a change waiting for approval, a change announced
// and not applied (notify-only), and the approver in the audit trail. What
// names a change is its identifier, resources, hash prefixes and field
// managers: never a value.

const (
	// ReasonAwaitingApproval: a due reload waits for a person to approve
	// its change with the approve annotation.
	ReasonAwaitingApproval = "ReloadAwaitingApproval"
	// ReasonNotified: a notify-only workload's change was announced and not
	// applied.
	ReasonNotified = "ReloadNotified"
)

// AwaitingApproval tells, once per change, that v's due reloads wait for
// approval: the Event naming the change and how to approve it, the metric
// (one series per resource, replacing a superseded change's), the audit
// lines, the log line and the alert.
func (r *Reporter) AwaitingApproval(v workload.View, d decide.Decision, approveKey string) {
	key := v.Key()
	if !r.once(key, noticeAwaiting, d.ChangeID) {
		return
	}
	r.dropAwaiting(key)
	for _, rl := range d.Reloads {
		r.o.Metrics.AwaitingApproval.With(r.awaitingLabels(v, d.ChangeID, rl)).Set(1)
	}
	approve := fmt.Sprintf("kubectl annotate %s/%s -n %s %s=%s --overwrite",
		strings.ToLower(string(v.Kind)), key.Name, key.Namespace, approveKey, d.ChangeID)
	r.o.Recorder.Eventf(eventObject(v), corev1.EventTypeNormal, ReasonAwaitingApproval,
		"Reload of %s '%s' in namespace '%s' for %s waits for approval of change %s (%s); to approve: %s",
		v.Kind, key.Name, key.Namespace, r.describeChange(v, d.Reloads), d.ChangeID, d.ApprovalFrom, approve)
	r.audit(v, d.Reloads, audit.AwaitingApproval, "approval-required", withChange(d.ChangeID))
	r.o.Logger.Info("reload waits for approval", "workload", key.String(), "change", d.ChangeID,
		"resources", Describe(d.Reloads))
	if r.o.Notify != nil {
		e := AlertEvent(v, d.Reloads, r.o.Now())
		e.Kind, e.Change = alerts.KindAwaitingApproval, d.ChangeID
		r.o.Notify(e)
	}
}

// Notified tells, once per change, of a notify-only workload's due change:
// the Event, the metric, the audit lines, the log line and the alert. The
// sync then records the change as handled; the workload is not rolled.
func (r *Reporter) Notified(v workload.View, d decide.Decision) {
	key := v.Key()
	if !r.once(key, noticeNotified, d.ChangeID) {
		return
	}
	r.o.Metrics.Notified.WithLabelValues(string(v.Kind)).Inc()
	r.o.Recorder.Eventf(eventObject(v), corev1.EventTypeNormal, ReasonNotified,
		"Changes detected in %s in namespace '%s': %s '%s' is notify-only (%s), so it was not reloaded (change %s)",
		r.describeChange(v, d.Reloads), key.Namespace, v.Kind, key.Name, d.ApprovalFrom, d.ChangeID)
	r.audit(v, d.Reloads, audit.Notified, "notify-only", withChange(d.ChangeID))
	r.o.Logger.Info("change notified, not reloaded (notify-only)", "workload", key.String(), "change", d.ChangeID,
		"resources", Describe(d.Reloads))
	if r.o.Notify != nil {
		e := AlertEvent(v, d.Reloads, r.o.Now())
		e.Kind, e.Change = alerts.KindNotified, d.ChangeID
		r.o.Notify(e)
	}
}

// ApprovalSettled is told by every sync that does not find key waiting for
// approval: a change that waited was applied, superseded by one that needs
// no approval, or is no longer due, so its series go.
func (r *Reporter) ApprovalSettled(key workload.Key) {
	r.mu.Lock()
	_, waited := r.told[key][noticeAwaiting]
	r.mu.Unlock()
	if !waited {
		return
	}
	r.clear(key, noticeAwaiting)
	r.dropAwaiting(key)
}

func (r *Reporter) dropAwaiting(key workload.Key) {
	r.o.Metrics.AwaitingApproval.DeletePartialMatch(prometheus.Labels{
		"namespace": key.Namespace, "workload_kind": string(key.Kind), "workload": key.Name})
}

func (r *Reporter) awaitingLabels(v workload.View, change string, rl decide.Reload) prometheus.Labels {
	key := v.Key()
	l := prometheus.Labels{"namespace": key.Namespace, "workload_kind": string(key.Kind), "workload": key.Name,
		"change": change, "resource": rl.String(), "old_hash": hashPrefix(rl.Baseline.Hash), "new_hash": hashPrefix(rl.Hash),
		"changed_by": ""}
	if w := r.o.Resources.ChangedBy(rl.Kind, key.Namespace, rl.Name, rl.ResourceVersion); w != nil {
		l["changed_by"] = w.Manager
	}
	return l
}

// describeChange names each resource of a change with its hash prefixes
// and the field manager of the write that changed it.
func (r *Reporter) describeChange(v workload.View, rs []decide.Reload) string {
	parts := make([]string, 0, len(rs))
	for _, rl := range rs {
		s := fmt.Sprintf("'%s' of type '%s' (%s, hash %s -> %s", rl.Name, rl.Kind.Upper(), rl.Change,
			orNone(hashPrefix(rl.Baseline.Hash)), orNone(hashPrefix(rl.Hash)))
		if w := r.o.Resources.ChangedBy(rl.Kind, v.Key().Namespace, rl.Name, rl.ResourceVersion); w != nil {
			s += ", changed by " + w.Manager
		}
		parts = append(parts, s+")")
	}
	return strings.Join(parts, ", ")
}

func withChange(id string) func(*audit.Record) {
	return func(rec *audit.Record) { rec.Change = id }
}

// approvedBy adds the change and its approver to the audit lines of an
// approved reload; none for a reload that needed no approval.
func approvedBy(d decide.Decision) func(*audit.Record) {
	return func(rec *audit.Record) {
		if d.Approval != decide.ApprovalRequired || !d.Approved {
			return
		}
		rec.Change = d.ChangeID
		if a := d.Approver; a != nil {
			rec.ApprovedBy = &audit.Writer{Manager: a.Manager, Operation: a.Operation, Time: a.Time}
		}
	}
}

// hashPrefix is the part of a hash a report shows: the audit trail's.
func hashPrefix(h string) string {
	if len(h) > audit.HashPrefixLen {
		return h[:audit.HashPrefixLen]
	}
	return h
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reloader-dev/reloader/controller/alerts"
	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// What a write did: reloaded, failed, sent to the webhook; and the changes
// deliberately not applied. Each is reported after the write, so a retried
// sync does not report a reload twice.

// Reloaded reports a write of d's change that landed: the skips it carried,
// and when it rolled the workload, the metrics, the Reloaded Event, the
// audit lines, the log line and the alert. latency runs from the first
// event of the change.
func (r *Reporter) Reloaded(v workload.View, d decide.Decision, latency time.Duration) {
	r.Skipped(v, d.Skips)
	if !d.Change.Rollout() {
		return
	}
	key := v.Key()
	r.o.Metrics.WorkloadsMatched.WithLabelValues(string(v.Kind)).Inc()
	r.o.Metrics.RecordReload(true, key.Namespace)
	r.o.Metrics.RecordAction(string(v.Kind), "success", latency)
	msg := fmt.Sprintf(msgReloaded, Describe(d.Applied), key.Namespace, key.Name, v.Kind, key.Namespace) + r.changedByText(v, d.Applied)
	r.o.Recorder.Event(eventObject(v), corev1.EventTypeNormal, ReasonReloaded, msg)
	r.audit(v, d.Applied, audit.Reloaded, "", approvedBy(d))
	r.clear(key, noticeDeferred)
	r.o.Logger.Info("reloaded", "workload", key.String(), "resources", Describe(d.Applied), "latency", latency.String())
	if r.o.Notify != nil {
		r.o.Notify(AlertEvent(v, d.Applied, r.o.Now()))
	}
}

// Failed reports a write of d's reloads the apiserver refused for good
// (not a conflict: that is retried silently).
func (r *Reporter) Failed(v workload.View, d decide.Decision, err error, latency time.Duration) {
	key := v.Key()
	r.o.Metrics.RecordReload(false, key.Namespace)
	r.o.Metrics.RecordAction(string(v.Kind), "error", latency)
	r.o.Recorder.Eventf(eventObject(v), corev1.EventTypeWarning, ReasonReloadFail,
		msgReloadFailed, v.Kind, key.Name, key.Namespace, Describe(d.Applied), err)
	r.audit(v, d.Applied, audit.Failed, "write refused: "+err.Error())
}

// WebhookSent reports d's change delivered to the webhook instead of the
// workload (--webhook-url).
func (r *Reporter) WebhookSent(v workload.View, d decide.Decision) {
	r.audit(v, d.Applied, audit.Webhook, "")
	r.Skipped(v, d.Skips)
	r.o.Logger.Info("sent webhook instead of reloading", "workload", v.Key().String(), "resources", Describe(d.Applied))
}

// NoContainer counts reloads with no container to carry the env var.
func (r *Reporter) NoContainer(n int) {
	for range n {
		r.o.Metrics.RecordSkipped(metrics.SkipStrategyNotUpdated)
	}
}

// Skipped logs, counts and audits changes deliberately not applied, once
// the sync that decided them has been written.
func (r *Reporter) Skipped(v workload.View, skips []decide.Skip) {
	key := v.Key()
	for _, s := range skips {
		r.o.Metrics.SkippedTotal.WithLabelValues(s.Reason).Inc()
		r.o.Logger.Info("change not applied", "workload", key.String(), "resource", s.Kind.Title()+" "+s.Name,
			"reason", s.Reason, "detail", s.Detail())
		if r.o.Audit == nil {
			continue
		}
		rec := audit.Record{Time: r.o.Now(), Workload: auditObject(v),
			Resource:  audit.Resource{Kind: s.Kind.Title(), Name: s.Name},
			ChangedBy: r.o.Resources.ChangedBy(s.Kind, key.Namespace, s.Name, ""),
			Strategy:  r.o.Strategy, Decision: audit.Skipped, Reason: s.Reason}
		if st := r.o.Resources.Resource(s.Kind, key.Namespace, s.Name); st.Exists {
			rec.Resource.ResourceVersion, rec.NewHash = st.ResourceVersion, st.Hash
		}
		r.writeAudit(rec)
	}
}

// NotNamed reports a change of a resource v uses, opted into reloading, but
// whose annotations do not select it (what: created, changed, deleted).
func (r *Reporter) NotNamed(v workload.View, kind refs.Kind, name, what string) {
	r.o.Metrics.SkippedTotal.WithLabelValues(decide.SkipNotNamed).Inc()
	r.o.Logger.Info("change not applied", "workload", v.Key().String(), "resource", kind.Title()+" "+name,
		"event", what, "reason", decide.SkipNotNamed, "detail", decide.SkipDetail(decide.SkipNotNamed))
}

// Problems turns a workload's configuration problems into a ReloadFail
// Event and a metric, once per distinct set, so a bad annotation does not
// spam.
func (r *Reporter) Problems(v workload.View, problems []string) {
	key := v.Key()
	sorted := append([]string(nil), problems...)
	sort.Strings(sorted)
	text := strings.Join(sorted, "; ")
	if !r.once(key, noticeProblems, text) || text == "" {
		return
	}
	r.o.Metrics.InvalidAnnotations.WithLabelValues(string(v.Kind)).Inc()
	r.o.Recorder.Eventf(eventObject(v), corev1.EventTypeWarning, ReasonReloadFail, msgProblems, v.Kind, key.Name, key.Namespace, text)
	r.o.Logger.Warn("workload configuration problem", "workload", key.String(), "problems", text)
}

// AlertEvent is the alert (and webhook body) of applied reloads of v.
func AlertEvent(v workload.View, applied []decide.Reload, now time.Time) alerts.Event {
	key := v.Key()
	e := alerts.Event{Workload: alerts.Object{Kind: string(v.Kind), Namespace: key.Namespace, Name: key.Name}, Time: now}
	for _, rl := range applied {
		e.Resources = append(e.Resources, alerts.Object{Kind: rl.Kind.Title(), Namespace: key.Namespace, Name: rl.Name})
	}
	return e
}

// Describe names reloads as the original's Events do.
func Describe(rs []decide.Reload) string {
	parts := make([]string, 0, len(rs))
	for _, rl := range rs {
		parts = append(parts, fmt.Sprintf("'%s' of type '%s'", rl.Name, rl.Kind.Upper()))
	}
	return strings.Join(parts, ", ")
}

// audit writes one line per reload of v with decision dec; edits, when
// given, add to each line (the change under approval, its approver).
func (r *Reporter) audit(v workload.View, rs []decide.Reload, dec audit.Decision, reason string, edits ...func(*audit.Record)) {
	if r.o.Audit == nil {
		return
	}
	key := v.Key()
	for _, rl := range rs {
		why := reason
		if why == "" {
			why = rl.Change.String()
		}
		rec := audit.Record{Time: r.o.Now(), Workload: auditObject(v),
			Resource:  audit.Resource{Kind: rl.Kind.Title(), Name: rl.Name, ResourceVersion: rl.ResourceVersion},
			ChangedBy: r.o.Resources.ChangedBy(rl.Kind, key.Namespace, rl.Name, rl.ResourceVersion),
			OldHash:   rl.Baseline.Hash, NewHash: rl.Hash, Strategy: r.o.Strategy, Decision: dec, Reason: why}
		for _, edit := range edits {
			edit(&rec)
		}
		r.writeAudit(rec)
	}
}

func (r *Reporter) writeAudit(rec audit.Record) {
	if err := r.o.Audit.Write(rec); err != nil {
		// stdout gone (a closed pipe) is not a reason to stop reloading;
		// the log says the trail has a gap.
		r.o.Logger.Error("audit trail", "workload", rec.Workload.Namespace+"/"+rec.Workload.Name, "err", err)
	}
}

func auditObject(v workload.View) audit.Object {
	key := v.Key()
	return audit.Object{Kind: string(v.Kind), Namespace: key.Namespace, Name: key.Name}
}

// changedByText is the Event's "(changed by ...)" suffix for the applied
// reloads: each distinct field manager of the writes that changed them, or
// "" when the cache does not tell.
func (r *Reporter) changedByText(v workload.View, rs []decide.Reload) string {
	seen := map[string]bool{}
	var managers []string
	for _, rl := range rs {
		if w := r.o.Resources.ChangedBy(rl.Kind, v.Key().Namespace, rl.Name, rl.ResourceVersion); w != nil && !seen[w.Manager] {
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

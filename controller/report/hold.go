package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/controller/budget"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/workload"
)

// What holds a due reload back, and what the controller notices on the way:
// storm control, the change window, the rollout budget, an outlived pause,
// a stale view, an optional API missing.

// Deferred audits reloads held (reason: "min-reload-interval",
// "change-window", "max-concurrent-rollouts", ...) once per held set: the
// same changes found held again by a later sync are not repeated.
func (r *Reporter) Deferred(v workload.View, rs []decide.Reload, reason string) {
	if r.o.Audit == nil {
		return
	}
	parts := make([]string, 0, len(rs))
	for _, rl := range rs {
		parts = append(parts, rl.Kind.Title()+"/"+rl.Name+"@"+rl.Hash)
	}
	sort.Strings(parts)
	if !r.once(v.Key(), noticeDeferred, strings.Join(parts, ",")) {
		return
	}
	r.audit(v, rs, audit.Deferred, reason)
}

// Coalesced reports reloads storm control holds (--min-reload-interval).
func (r *Reporter) Coalesced(v workload.View, d decide.Decision) {
	r.o.Metrics.Coalesced.Inc()
	r.Deferred(v, d.Reloads, "min-reload-interval")
}

// OutsideWindow tells, once per change, that v's due reloads wait for its
// change window: an Event with the time it opens, the metric, the audit
// line.
func (r *Reporter) OutsideWindow(v workload.View, d decide.Decision) {
	key := v.Key()
	opens := r.o.Now().Add(d.WindowOpensIn).UTC().Truncate(time.Second)
	r.Deferred(v, d.Reloads, "change-window")
	if !r.once(key, noticeOutsideWindow, d.NextRecord) {
		return
	}
	r.o.Metrics.WindowDeferred.Inc()
	r.o.Recorder.Eventf(eventObject(v), corev1.EventTypeNormal, ReasonOutsideChangeWindow,
		"Reload of %s '%s' in namespace '%s' for %s waits for its change window (%s, %s): applied when it opens at %s",
		v.Kind, key.Name, key.Namespace, Describe(d.Applied), d.WindowSpec, d.WindowFrom, opens.Format(time.RFC3339))
	r.o.Logger.Info("reload waits for its change window", "workload", key.String(), "window", d.WindowSpec, "opens", opens.Format(time.RFC3339))
}

// WindowInvalid audits reloads held by a change window that does not parse
// (the ReloadFail Event of Problems says what is wrong).
func (r *Reporter) WindowInvalid(v workload.View, d decide.Decision) {
	r.Deferred(v, d.Reloads, "change-window-invalid")
}

// WaitingForSlot reports a due reload the rollout budget holds: the first
// time, the Event, the metric and the log line; every time, the gauges and
// the audit line (once per held set).
func (r *Reporter) WaitingForSlot(v workload.View, d decide.Decision, verdict budget.Verdict, counts budget.Counts, waiting int) {
	r.o.Metrics.RolloutsInProgress.Set(float64(counts.Cluster))
	r.o.Metrics.RolloutsWaiting.Set(float64(waiting))
	if verdict.Admitted {
		return
	}
	key := v.Key()
	reason, where := "max-concurrent-rollouts", "in the cluster"
	if verdict.Scope != "cluster" {
		reason, where = "max-concurrent-rollouts-per-namespace", "in namespace "+verdict.Scope
	}
	if verdict.First {
		r.o.Metrics.RolloutsHeld.Inc()
		r.o.Recorder.Eventf(eventObject(v), corev1.EventTypeNormal, ReasonRolloutWaiting,
			"Reload of %s '%s' in namespace '%s' for %s waits for a rollout slot: %d of %d rolling out %s (--%s), %d due earlier",
			v.Kind, key.Name, key.Namespace, Describe(d.Applied), verdict.Rolling, verdict.Limit, where, reason, verdict.Ahead)
		r.o.Logger.Info("reload waits for a rollout slot", "workload", key.String(), "rolling", verdict.Rolling,
			"limit", verdict.Limit, "scope", verdict.Scope, "ahead", verdict.Ahead)
	}
	r.Deferred(v, d.Reloads, reason)
}

// Stalled tells of each rollout that passed its deadline (budget.Count
// finds each once): an Event on the workload, a log line and the metric.
func (r *Reporter) Stalled(stalls []budget.Stall, now time.Time) {
	for _, s := range stalls {
		r.o.Metrics.RolloutsStalled.Inc()
		r.o.Recorder.Event(eventObject(s.View), corev1.EventTypeWarning, ReasonRolloutStalled, s.Message(now))
		r.o.Logger.Warn("rollout passed its deadline; it no longer holds a rollout slot", "workload", s.View.Key().String(), "deadline", s.Deadline)
	}
}

// PauseOutlived reports an outlived pause once: a Warning Event and
// reloader_pause_outlived_total. The sync resumes it when it is ours
// (decide sets Resume); a person's pause is only reported.
func (r *Reporter) PauseOutlived(v workload.View, w *decide.PauseWatch) {
	if w == nil || !w.Outlived {
		return
	}
	key := v.Key()
	if !r.once(key, noticePauseOutlived, w.Manager+"@"+w.Since.UTC().Format(time.RFC3339)) {
		return
	}
	what := "left paused: it is not this controller's pause (kubectl rollout resume ends it)"
	if w.Ours {
		what = "resumed: the pause is this controller's and its paused-at annotation was lost"
	}
	r.o.Metrics.PauseOutlived.WithLabelValues(strconv.FormatBool(w.Ours)).Inc()
	msg := fmt.Sprintf("%s '%s' in namespace '%s' has been paused since %s (spec.paused last written by %s), longer than its pause period %s; %s",
		v.Kind, key.Name, key.Namespace, w.Since.UTC().Format(time.RFC3339), w.Manager, w.Period, what)
	r.o.Recorder.Event(eventObject(v), corev1.EventTypeWarning, ReasonPauseOutlived, msg)
	r.o.Logger.Warn("pause outlived its period", "workload", key.String(), "manager", w.Manager,
		"since", w.Since.UTC().Format(time.RFC3339), "period", w.Period.String(), "resumed", w.Ours)
}

// Resumed logs the end of a pause period this controller wrote.
func (r *Reporter) Resumed(v workload.View) {
	r.o.Logger.Info("resumed after pause period", "workload", v.Key().String())
}

// StaleView reports a decision not written because another writer applied
// newer versions than this replica's caches hold (decide/versions.go).
func (r *Reporter) StaleView(v workload.View, stale []decide.StaleView) {
	parts := make([]string, 0, len(stale))
	for _, s := range stale {
		parts = append(parts, s.String())
	}
	r.o.Metrics.StaleViews.Inc()
	r.o.Logger.Info("not writing from an older view than the one already applied; waiting for the caches",
		"workload", v.Key().String(), "stale", strings.Join(parts, "; "))
}

// API is an optional API as a report names it.
type API struct {
	Name      string   // the metric label ("argo-rollouts")
	Flag      string   // the flag that asked for it
	Resources []string // what must be served
}

// APIUnavailable tells, at start, that an asked-for API is missing and
// what that means.
func (r *Reporter) APIUnavailable(api API, poll time.Duration) {
	r.o.Metrics.OptionalAPIAvailable.WithLabelValues(api.Name).Set(0)
	msg := fmt.Sprintf("%s, but the apiserver does not serve %s: not watched until it is (checked every %s); everything else is reloaded",
		api.Flag, strings.Join(api.Resources, ", "), poll)
	r.o.Logger.Warn(msg, "api", api.Name)
	if r.o.Self != nil {
		r.o.Recorder.Event(r.o.Self, corev1.EventTypeWarning, ReasonAPIUnavailable, msg)
	}
}

// APIAvailable tells that an asked-for API is served and watched; announce
// is false at start, when it always was (the metric only).
func (r *Reporter) APIAvailable(api API, announce bool) {
	r.o.Metrics.OptionalAPIAvailable.WithLabelValues(api.Name).Set(1)
	if !announce {
		return
	}
	msg := fmt.Sprintf("%s: the apiserver now serves %s; watching it", api.Flag, strings.Join(api.Resources, ", "))
	r.o.Logger.Info(msg, "api", api.Name)
	if r.o.Self != nil {
		r.o.Recorder.Event(r.o.Self, corev1.EventTypeNormal, ReasonAPIAvailable, msg)
	}
}

package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/reloader-dev/reloader/controller/alerts"
	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/rollout"
	"github.com/reloader-dev/reloader/controller/workload"
)

// LastReload is our annotation, on the workload's metadata, holding when the
// controller last rolled it: the durable clock of storm control.
const LastReload = decide.LastReload

// sync makes one workload's applied state match its resources: read (the
// caches), decide (decide.Decide, pure), apply (at most one write per
// workload kind's reload mechanism, only when something differs), report.
// It stays whole because its order is the controller's contract: gates,
// pause, record, storm control, write.
func (c *Controller) sync(ctx context.Context, key workload.Key) (result, error) {
	v, ok, err := c.getWorkload(key)
	if err == nil {
		if handled, err := c.syncJobRecords(ctx, key, v, ok); handled {
			return result{}, err
		}
	}
	if err != nil || !ok {
		if err == nil {
			c.deferred.forget(key)
			if c.gate != nil {
				c.gate.Forget(key)
			}
		}
		return result{}, err
	}
	if !c.handlerDelivered(key, v) {
		// Enqueued by another event (a ConfigMap changed right after the
		// workload was created) before the workload's own Add ran: that Add
		// records the birth and enqueues the key again. Syncing now would
		// judge the first sight without the birth and adopt the change.
		c.o.Logger.Debug("sync deferred until the workload's Add is handled", "workload", key.String())
		return result{waiting: true}, nil
	}
	// Decisions read a pending adoption record as written; writes go to v.
	dv, pending := c.adoptionView(key, v)
	d := decide.Decide(c.decideOptions(), dv, cacheReader{c}, c.o.Now())
	switch d.Gate {
	case decide.GateWorkload:
		// Skips are counted where the original counts them: on the
		// ConfigMap or Secret event (configHandler), not per workload.
		return result{}, nil
	case decide.GateNamespace, decide.GateNotInterested:
		// Annotated later, it is adopted, not judged against its creation.
		return result{adopted: true}, nil
	}
	if d.PausedFor > 0 {
		return result{requeueAfter: d.PausedFor}, nil
	}
	if d.Resume != nil {
		if err := rollout.Apply(ctx, c.cs, v, *d.Resume, c.writeOptions()); err != nil {
			return result{}, fmt.Errorf("resuming paused %s: %w", v.Key(), err)
		}
		c.o.Logger.Info("resumed after pause period", "workload", key.String())
	}
	// Recorded: the first sight is over.
	res := result{adopted: d.HasRecord}
	if w := d.PauseWatch; w != nil {
		c.watchPause(v, w)
		if !w.Outlived {
			res.requeueAfter = w.In
		}
	}
	if len(d.Stale) > 0 {
		// Another writer applied newer versions than this replica's caches
		// hold (decide/versions.go): writing now would roll the workload
		// back. The newer versions' watch events bring the key back.
		c.o.Metrics.StaleViews.Inc()
		c.o.Logger.Info("not writing from an older view than the one already applied; waiting for the caches",
			"workload", key.String(), "stale", describeStale(d.Stale))
		res.waiting = true
		return res, nil
	}
	c.report(v, slices.Sorted(slices.Values(d.Problems)))
	if len(d.Reloads) == 0 && c.gate != nil {
		c.gate.Forget(key)
	}
	switch {
	case len(d.Reloads) == 0 && !d.RecordOnly && pending == nil:
		return res, nil
	case len(d.Reloads) == 0:
		return c.record(ctx, key, v, d, pending, res)
	case d.HeldFor > 0:
		// Storm control: the record is left as it is, so the deferred sync
		// still sees the difference and applies the latest state once.
		c.o.Metrics.Coalesced.Inc()
		c.auditDeferred(v, d.Reloads, "min-reload-interval")
		res.requeueAfter = d.HeldFor
		return res, nil
	case d.WindowInvalid:
		// The ReloadFail Event (report) says what is wrong; fixing the
		// annotation is a workload update, which syncs again.
		c.auditDeferred(v, d.Reloads, "change-window-invalid")
		return res, nil
	case d.WindowOpensIn > 0:
		c.outsideWindow(v, d)
		res.requeueAfter = d.WindowOpensIn
		return res, nil
	}
	if wait := c.holdForBudget(v, d); wait > 0 {
		res.requeueAfter = wait
		return res, nil
	}
	res.reloaded, err = c.apply(ctx, v, d)
	if err != nil && c.gate != nil {
		c.gate.Release(key)
	}
	return res, err
}

// record writes the baseline (or drops a resource no longer watched)
// without touching the template: this rolls nothing. A first record is an
// adoption, paced (adoption.go).
func (c *Controller) record(ctx context.Context, key workload.Key, v workload.View, d decide.Decision, pending *pendingRecord, res result) (result, error) {
	if pending != nil || !d.HasRecord {
		if wait := c.paceAdoption(key, v, d.NextRecord, pending); wait > 0 {
			res.adopted, res.recordAfter = true, wait
			return res, nil
		}
	}
	if err := rollout.Apply(ctx, c.cs, v, d.RecordChange(), c.writeOptions()); err != nil {
		return res, fmt.Errorf("recording applied hashes: %w", err)
	}
	c.reportSkips(v, d.Skips)
	return res, nil
}

func (c *Controller) decideOptions() decide.Options { return c.o.DecideOptions() }

// DecideOptions are the settings of o the decision depends on.
func (o Options) DecideOptions() decide.Options {
	return decide.Options{Names: o.Names, Strategy: o.Strategy, AutoReloadAll: o.AutoReloadAll,
		ReloadOnCreate: o.ReloadOnCreate, ReloadOnDelete: o.ReloadOnDelete,
		IgnoreConfigMaps: o.IgnoreConfigMaps, IgnoreSecrets: o.IgnoreSecrets, CSI: o.CSI,
		Filtered: o.ResourceSelector != "", MinReloadInterval: o.MinReloadInterval, UsedKeysOnly: o.UsedKeysOnly, FieldManager: o.FieldManager, Hash: o.Hash,
		ChangeWindow:       o.ChangeWindow,
		NamespacesToIgnore: o.NamespacesToIgnore, NamespaceSelector: o.NamespaceSelector}
}

// apply carries out a decided reload: to the webhook in --webhook-url mode,
// else to the workload; then records the outcome. It returns whether it
// rolled the workload (or sent its webhook).
func (c *Controller) apply(ctx context.Context, v workload.View, d decide.Decision) (bool, error) {
	for range d.NoContainer {
		c.o.Metrics.RecordSkipped(metrics.SkipStrategyNotUpdated)
	}
	if c.o.Webhook != nil && d.Change.Rollout() {
		if err := c.sendWebhook(ctx, v, d); err != nil {
			return false, err
		}
		c.auditReloads(v, d.Applied, audit.Webhook, "")
		c.reportSkips(v, d.Skips)
		return true, nil
	}
	start := c.o.Now()
	end := c.busy.Begin()
	err := rollout.Apply(ctx, c.cs, v, d.Change, c.writeOptions())
	end()
	if err := c.recordOutcome(v, d, start, err); err != nil {
		return false, err
	}
	return d.Change.Rollout(), nil
}

// recordOutcome tells what a write did: metrics, the Event, the log line
// and the alert. A conflict or a vanished object is only returned: the retry
// decides again from fresh state.
func (c *Controller) recordOutcome(v workload.View, d decide.Decision, start time.Time, err error) error {
	key := v.Key()
	latency := time.Duration(0)
	if t := c.keys.read(key).enqueuedAt; !t.IsZero() {
		latency = c.o.Now().Sub(t)
	} else {
		latency = c.o.Now().Sub(start)
	}
	if err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			return err
		}
		c.o.Metrics.RecordReload(false, key.Namespace)
		c.o.Metrics.RecordAction(string(v.Kind), "error", latency)
		c.o.Recorder.Eventf(eventObject(v), corev1.EventTypeWarning, ReasonReloadFail,
			msgReloadFailed, v.Kind, key.Name, key.Namespace, describe(d.Applied), err)
		c.auditReloads(v, d.Applied, audit.Failed, "write refused: "+err.Error())
		return err
	}
	c.reportSkips(v, d.Skips)
	if !d.Change.Rollout() {
		return nil
	}
	c.o.Metrics.WorkloadsMatched.WithLabelValues(string(v.Kind)).Inc()
	c.o.Metrics.RecordReload(true, key.Namespace)
	c.o.Metrics.RecordAction(string(v.Kind), "success", latency)
	msg := fmt.Sprintf(msgReloaded, describe(d.Applied), key.Namespace, key.Name, v.Kind, key.Namespace) + c.changedByText(v, d.Applied)
	c.o.Recorder.Event(eventObject(v), corev1.EventTypeNormal, ReasonReloaded, msg)
	c.auditReloads(v, d.Applied, audit.Reloaded, "")
	c.deferred.forget(key)
	c.o.Logger.Info("reloaded", "workload", key.String(), "resources", describe(d.Applied), "latency", latency.String())
	if c.o.Notify != nil {
		c.o.Notify(alertEvent(v, d.Applied, c.o.Now()))
	}
	return nil
}

// sendWebhook is --webhook-url mode: the change goes to the webhook instead
// of the workload. Only the record is written, after the webhook accepted
// it, so each change is sent until delivered and then never again.
func (c *Controller) sendWebhook(ctx context.Context, v workload.View, d decide.Decision) error {
	if err := c.fence(); err != nil {
		return fmt.Errorf("sending the webhook for %s: %w", v.Key(), err)
	}
	if err := c.o.Webhook.Send(ctx, alertEvent(v, d.Applied, c.o.Now())); err != nil {
		return fmt.Errorf("sending the webhook for %s: %w", v.Key(), err)
	}
	// The webhook has been delivered: record it whatever else changed on
	// the object meanwhile (no resourceVersion guard), or a conflict would
	// send it again.
	ch := d.RecordChange()
	ch.Unguarded = true
	if err := rollout.Apply(ctx, c.cs, v, ch, c.writeOptions()); err != nil {
		return fmt.Errorf("recording the applied hashes after the webhook: %w", err)
	}
	c.o.Logger.Info("sent webhook instead of reloading", "workload", v.Key().String(), "resources", describe(d.Applied))
	return nil
}

func alertEvent(v workload.View, applied []decide.Reload, now time.Time) alerts.Event {
	key := v.Key()
	e := alerts.Event{Workload: alerts.Object{Kind: string(v.Kind), Namespace: key.Namespace, Name: key.Name}, Time: now}
	for _, r := range applied {
		e.Resources = append(e.Resources, alerts.Object{Kind: r.Kind.Title(), Namespace: key.Namespace, Name: r.Name})
	}
	return e
}

// report turns problems into a ReloadFail Event and a metric, once per
// distinct set of problems per workload, so a bad annotation does not spam.
func (c *Controller) report(v workload.View, problems []string) {
	key := v.Key()
	text := strings.Join(problems, "; ")
	if !c.keys.onReported(key, text) || text == "" {
		return
	}
	c.o.Metrics.InvalidAnnotations.WithLabelValues(string(v.Kind)).Inc()
	c.o.Recorder.Eventf(eventObject(v), corev1.EventTypeWarning, ReasonReloadFail, msgProblems, v.Kind, key.Name, key.Namespace, text)
	c.o.Logger.Warn("workload configuration problem", "workload", key.String(), "problems", text)
}

func (c *Controller) writeOptions() rollout.Options {
	return rollout.Options{FieldManager: c.o.FieldManager, Dynamic: c.o.Dynamic, Fence: c.fence}
}

// fence says whether this replica may write now (Options.Fence): an HA
// replica that cannot know it still leads writes nothing.
func (c *Controller) fence() error {
	if c.o.Fence == nil {
		return nil
	}
	if err := c.o.Fence(); err != nil {
		c.o.Metrics.WritesFenced.Inc()
		return err
	}
	return nil
}

func describeStale(s []decide.StaleView) string {
	parts := make([]string, 0, len(s))
	for _, v := range s {
		parts = append(parts, v.String())
	}
	return strings.Join(parts, "; ")
}

// EnvVarName is the original's reload variable name:
// STAKATER_<NAME>_CONFIGMAP|SECRET (decide.EnvVarName).
func EnvVarName(kind refs.Kind, name string) string { return decide.EnvVarName(kind, name) }

func describe(rs []decide.Reload) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("'%s' of type '%s'", r.Name, r.Kind.Upper()))
	}
	return strings.Join(parts, ", ")
}

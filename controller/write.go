package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/internal/busy"
	"github.com/reloader-dev/reloader/controller/report"
	"github.com/reloader-dev/reloader/controller/rollout"
	"github.com/reloader-dev/reloader/controller/workload"
)

// writer carries out what a sync decided: a reload, the record alone, the
// end of a pause, a webhook delivery; and reports what each write did.
// Every write asks the fence first (Options.Fence).
type writer struct {
	cs     kubernetes.Interface
	o      *Options
	busy   *busy.Tracker
	report *report.Reporter
	keys   *keyStates
}

func (w *writer) options() rollout.Options {
	return rollout.Options{FieldManager: w.o.FieldManager, Dynamic: w.o.Dynamic, Kinds: w.o.Declared, Fence: w.fence}
}

// fence says whether this replica may write now (Options.Fence): an HA
// replica that cannot know it still leads writes nothing.
func (w *writer) fence() error {
	if w.o.Fence == nil {
		return nil
	}
	if err := w.o.Fence(); err != nil {
		w.o.Metrics.WritesFenced.Inc()
		return err
	}
	return nil
}

// record writes the baseline (or drops a resource no longer watched)
// without touching the template: this rolls nothing.
func (w *writer) record(ctx context.Context, v workload.View, d decide.Decision) error {
	if err := rollout.Apply(ctx, w.cs, v, d.RecordChange(), w.options()); err != nil {
		return fmt.Errorf("recording applied hashes on %s: %w", v.Key(), err)
	}
	w.report.Skipped(v, d.Skips)
	return nil
}

// resume ends a pause period this controller wrote whose time is over.
func (w *writer) resume(ctx context.Context, v workload.View, d decide.Decision) error {
	if d.Resume == nil {
		return nil
	}
	if err := rollout.Apply(ctx, w.cs, v, *d.Resume, w.options()); err != nil {
		return fmt.Errorf("resuming paused %s: %w", v.Key(), err)
	}
	w.report.Resumed(v)
	return nil
}

// reload carries out a decided reload: to the webhook in --webhook-url
// mode, else to the workload; then reports it. It returns whether it
// rolled the workload (or sent its webhook). A conflict or a vanished
// object is only returned: the retry decides again from fresh state.
func (w *writer) reload(ctx context.Context, v workload.View, d decide.Decision) (bool, error) {
	w.report.NoContainer(d.NoContainer)
	if w.o.Webhook != nil && d.Change.Rollout() {
		if err := w.webhook(ctx, v, d); err != nil {
			return false, err
		}
		return true, nil
	}
	start := w.o.Now()
	end := w.busy.Begin()
	err := rollout.Apply(ctx, w.cs, v, d.Change, w.options())
	end()
	latency := w.o.Now().Sub(start)
	if t := w.keys.read(v.Key()).enqueuedAt; !t.IsZero() {
		latency = w.o.Now().Sub(t)
	}
	switch {
	case err != nil && (apierrors.IsConflict(err) || apierrors.IsNotFound(err)):
		return false, err
	case err != nil:
		w.report.Failed(v, d, err, latency)
		return false, err
	}
	w.report.Reloaded(v, d, latency)
	return d.Change.Rollout(), nil
}

// webhook is --webhook-url mode: the change goes to the webhook instead of
// the workload. Only the record is written, after the webhook accepted it,
// so each change is sent until delivered and then never again.
func (w *writer) webhook(ctx context.Context, v workload.View, d decide.Decision) error {
	if err := w.fence(); err != nil {
		return fmt.Errorf("sending the webhook for %s: %w", v.Key(), err)
	}
	if err := w.o.Webhook.Send(ctx, report.AlertEvent(v, d.Applied, w.o.Now())); err != nil {
		return fmt.Errorf("sending the webhook for %s: %w", v.Key(), err)
	}
	if err := w.recordDelivered(ctx, v, d.RecordChange()); err != nil {
		return fmt.Errorf("recording the applied hashes after the webhook for %s: %w", v.Key(), err)
	}
	w.report.WebhookSent(v, d)
	return nil
}

// recordDelivered writes the record of a webhook already delivered, guarded
// by resourceVersion like every other write. A conflict is settled here and
// not by the workqueue, whose retry would send the webhook again: the live
// object is read and, while its record is still the one the change was
// decided from, the record is written on it. If another writer (a newer
// leader) recorded meanwhile, this record is the older one and is dropped:
// written, it would put a change already handled back as due.
func (w *writer) recordDelivered(ctx context.Context, v workload.View, ch workload.Change) error {
	err := rollout.Apply(ctx, w.cs, v, ch, w.options())
	for range recordAttempts {
		if !apierrors.IsConflict(err) {
			return err
		}
		live, gerr := rollout.GetOf(ctx, w.cs, w.o.Dynamic, w.o.Declared, v.Kind, v.Object.GetNamespace(), v.Object.GetName())
		if gerr != nil {
			return gerr
		}
		if !sameRecord(v, live) {
			w.o.Metrics.StaleViews.Inc()
			return nil
		}
		err = rollout.Apply(ctx, w.cs, live, ch, w.options())
	}
	return err
}

// recordAttempts bounds how often a delivered webhook's record is written
// again on a live object that keeps changing (status updates). Past that the
// conflict goes back to the workqueue, whose retry may send the webhook
// again: at least once, as after any record write that failed.
const recordAttempts = 5

// sameRecord says whether live still carries the record (applied hashes
// and versions) the view was decided from.
func sameRecord(v, live workload.View) bool {
	a, b := v.Object.GetAnnotations(), live.Object.GetAnnotations()
	for _, k := range []string{annotations.Applied, annotations.AppliedVersions} {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

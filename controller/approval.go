package controller

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/rollout"
	"github.com/reloader-dev/reloader/controller/workload"
)

// approver confirms an approved change on the live workload and names who
// approved it. The cache drops managedFields, so this is one GET, made only
// for a change whose approval the cached view already shows. ok is false
// when the live workload no longer names the change (the approval was
// withdrawn or replaced): nothing is written, and that update brings the
// workload back.
func (c *Controller) approver(ctx context.Context, v workload.View, d decide.Decision) (decide.Decision, bool, error) {
	key := v.Key()
	live, err := c.live(ctx, key)
	if err != nil {
		return d, false, fmt.Errorf("reading who approved change %s of %s: %w", d.ChangeID, key, err)
	}
	if live.GetAnnotations()[c.o.Names.Approve] != d.ChangeID {
		return d, false, nil
	}
	d.Approver = decide.ApproverOf(live, c.o.Names.Approve)
	return d, true, nil
}

// live reads key's object from the apiserver with its managedFields: a
// custom kind as the dynamic client returns it, since decoding it for the
// caches drops them.
func (c *Controller) live(ctx context.Context, key workload.Key) (metav1.Object, error) {
	if gvr, custom := c.o.Declared.GVR(key.Kind); custom {
		if c.o.Dynamic == nil {
			return nil, fmt.Errorf("reading %s: no dynamic client", key)
		}
		return c.o.Dynamic.Resource(gvr).Namespace(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	}
	v, err := rollout.GetOf(ctx, c.cs, c.o.Dynamic, c.o.Declared, key.Kind, key.Namespace, key.Name)
	return v.Object, err
}

// notify is a notify-only workload's due change: recorded as handled with
// the record alone (which rolls nothing), then announced (Event, metric,
// audit, alert). The record is written first and guarded by the view's
// resourceVersion, as a reload is: a writer deciding from an older view (a
// leader thawed past its lease) fails with a conflict before it has
// announced anything, and the retry decides again from a fresh view, which
// finds the change recorded. Announcing first would tell an older change a
// second time, and an unguarded record would put it back as due.
func (w *writer) notify(ctx context.Context, v workload.View, d decide.Decision) error {
	if err := w.fence(); err != nil {
		return fmt.Errorf("notifying change %s of %s: %w", d.ChangeID, v.Key(), err)
	}
	if err := rollout.Apply(ctx, w.cs, v, d.RecordChange(), w.options()); err != nil {
		return fmt.Errorf("recording notified change %s of %s: %w", d.ChangeID, v.Key(), err)
	}
	w.report.Notified(v, d)
	w.report.Skipped(v, d.Skips)
	return nil
}

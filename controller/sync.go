package controller

import (
	"context"

	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/workload"
)

// LastReload is our annotation, on the workload's metadata, holding when the
// controller last rolled it: the durable clock of storm control.
const LastReload = decide.LastReload

// sync makes one workload's applied state match its resources: read (the
// caches), decide (decide.Decide, pure), apply (at most one write, only
// when something differs), report. The decision's verdict orders it: a
// gate stops it, a pause or a stale view waits, the record or the reload is
// written unless a gate holds it.
func (c *Controller) sync(ctx context.Context, key workload.Key) (result, error) {
	v, ok, err := c.cache.Workload(key)
	if err != nil {
		return result{}, err
	}
	if handled, err := c.syncJobRecords(ctx, key, v, ok); handled || !ok {
		if !ok {
			c.budget.forget(key)
			c.report.Forget(key)
		}
		return result{}, err
	}
	if !c.keys.delivered(key, v) {
		// Enqueued by another event (a ConfigMap changed right after the
		// workload was created) before the workload's own Add ran: that Add
		// records the birth and enqueues the key again. Syncing now would
		// judge the first sight without the birth and adopt the change.
		return result{waiting: true}, nil
	}
	// Decisions read a pending adoption record as written; writes go to v.
	dv, _ := c.adoption.view(v)
	d := decide.Decide(c.o.Options, dv, c.cache.Reader(c.keys.birth), c.o.Now())
	next := d.Next()
	res := result{adopted: d.HasRecord}
	if err := c.settle(ctx, key, v, d, next, &res); err != nil {
		return result{}, err
	}
	switch next.Step {
	case decide.Stop:
		return result{adopted: d.Adopts()}, nil
	case decide.Pause:
		return result{requeueAfter: next.After}, nil
	case decide.Stale:
		c.report.StaleView(v, d.Stale)
		res.waiting = true
		return res, nil
	case decide.UpToDate, decide.RecordOnly:
		c.budget.forget(key)
		return c.record(ctx, v, d, next, res)
	case decide.Notify:
		c.budget.forget(key)
		return res, c.write.notify(ctx, v, d)
	case decide.AwaitApproval:
		// No slot and no retry: the approving annotation, or a newer
		// change, is an update that brings the workload back.
		c.budget.forget(key)
		c.report.AwaitingApproval(v, d, c.o.Names.Approve)
		return res, nil
	}
	return c.reloadNow(ctx, key, v, d, res)
}

// settle does what every verdict past a gate shares before it is acted on:
// a pause the controller set and outlived is resumed, problems are
// reported, and an approval no longer pending is settled (applied,
// superseded, no longer due or no longer ours; a pause or a stale view only
// postpones the verdict).
func (c *Controller) settle(ctx context.Context, key workload.Key, v workload.View, d decide.Decision, next decide.Next, res *result) error {
	if next.Step > decide.Pause {
		if err := c.write.resume(ctx, v, d); err != nil {
			return err
		}
		c.report.PauseOutlived(v, d.PauseWatch)
		if w := d.PauseWatch; w != nil && !w.Outlived {
			res.requeueAfter = w.In
		}
	}
	if next.Step > decide.Stale {
		c.report.Problems(v, d.Problems)
	}
	if next.Step != decide.AwaitApproval && next.Step != decide.Pause && next.Step != decide.Stale {
		c.report.ApprovalSettled(key)
	}
	return nil
}

// reloadNow applies a due reload unless a gate (storm control, the change
// window, the budget, adoption pacing) holds it; an approved change is
// applied only while the live workload still names it, as its approver's.
func (c *Controller) reloadNow(ctx context.Context, key workload.Key, v workload.View, d decide.Decision, res result) (result, error) {
	for _, g := range c.gates {
		if held, after := g.hold(v, d); held {
			res.requeueAfter = after
			return res, nil
		}
	}
	if d.Approved {
		approved, ok, err := c.approver(ctx, v, d)
		if err != nil || !ok {
			c.budget.release(key)
			return res, err
		}
		d = approved
	}
	var err error
	if res.reloaded, err = c.write.reload(ctx, v, d); err != nil {
		c.budget.release(key)
	}
	return res, err
}

// record writes the record alone (a baseline, a resource no longer
// watched), or the adoption record waiting for its slot; a first record
// waits for its slot (adoptionGate). Up to date with nothing pending, it
// writes nothing.
func (c *Controller) record(ctx context.Context, v workload.View, d decide.Decision, next decide.Next, res result) (result, error) {
	if next.Step == decide.UpToDate && c.adoption.pending(v) == nil {
		return res, nil
	}
	if held, after := c.adoption.hold(v, d); held {
		res.adopted, res.recordAfter = true, after
		return res, nil
	}
	return res, c.write.record(ctx, v, d)
}

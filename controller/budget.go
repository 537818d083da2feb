package controller

import (
	"iter"
	"sync"
	"time"

	"github.com/reloader-dev/reloader/controller/budget"
	"github.com/reloader-dev/reloader/controller/cache"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/report"
	"github.com/reloader-dev/reloader/controller/workload"
)

// A gate may hold a decided write back. Held, it has reported why, and
// says when to come back (0: when something changes brings the workload
// back). The decision's own holds (storm control, the change window), the
// rollout budget and adoption pacing are gates.
type gate interface {
	hold(v workload.View, d decide.Decision) (held bool, after time.Duration)
}

// decidedHold is the gate of what the decision holds itself: storm control
// and the change window, reported.
type decidedHold struct{ report *report.Reporter }

func (g decidedHold) hold(v workload.View, d decide.Decision) (bool, time.Duration) {
	next := d.Next()
	if next.Step != decide.Hold {
		return false, 0
	}
	switch next.HoldReason {
	case decide.HoldMinReloadInterval:
		g.report.Coalesced(v, d)
	case decide.HoldWindowInvalid:
		// The ReloadFail Event (Problems) says what is wrong; fixing the
		// annotation is a workload update, which syncs again.
		g.report.WindowInvalid(v, d)
	case decide.HoldChangeWindow:
		g.report.OutsideWindow(v, d)
	}
	return true, next.After
}

// budgetRecheck is how soon a held reload asks again; a rollout finishing
// wakes the first waiters sooner (wake).
const budgetRecheck = 2 * time.Second

// budgetGate is the rollout budget's side in the controller: what the
// caches say is rolling, the hold before a write, and waking the next
// reload when a rollout finishes. The order and the limits are
// budget.Gate's. A nil *budgetGate holds nothing.
type budgetGate struct {
	gate   *budget.Gate
	o      *Options
	cache  *cache.Cache
	report *report.Reporter
	queue  *workQueue
	// mu makes counting the rollouts and admitting one reload atomic: two
	// workers counting before either admits would both see the last free
	// slot.
	mu sync.Mutex
}

func (g *budgetGate) hold(v workload.View, d decide.Decision) (bool, time.Duration) {
	if g == nil || g.o.Webhook != nil || !d.Change.Rollout() || !g.gatedKind(v.Kind) {
		return false, 0
	}
	g.mu.Lock()
	now := g.o.Now()
	counts, stalls := g.gate.Count(g.gated(), v.Key(), now)
	verdict := g.gate.Admit(v, counts, now)
	g.mu.Unlock()
	g.report.Stalled(stalls, now)
	g.report.WaitingForSlot(v, d, verdict, counts, len(g.gate.Waiting(now)))
	if verdict.Admitted {
		return false, 0
	}
	return true, budgetRecheck
}

// gated yields the cached Deployments, StatefulSets and DaemonSets, each
// with whether the controller manages it: only those hold a slot.
func (g *budgetGate) gated() iter.Seq[budget.Workload] {
	return func(yield func(budget.Workload) bool) {
		for v := range g.cache.All(g.gatedKind) {
			ns := v.Object.GetNamespace()
			managed := !g.o.NamespaceIgnored(ns) && g.o.namespaceSelected(g.cache, ns) && budget.Managed(v, g.o.Names, g.o.AutoReloadAll)
			if !yield(budget.Workload{View: v, Managed: managed}) {
				return
			}
		}
	}
}

// gatedKind: the built-in kinds the budget holds, and the declared kinds
// that report their progress.
func (g *budgetGate) gatedKind(k workload.Kind) bool {
	return budget.Gated(k) || g.o.Declared.Tracked(k)
}

// observe learns from a workload update; when it is the end of a rollout,
// the reloads first in line are enqueued, so a freed slot is taken now
// rather than at the next recheck.
func (g *budgetGate) observe(old, cur any) {
	if g == nil {
		return
	}
	g.gate.Observe(cur)
	if !budget.Rolling(old) || budget.Rolling(cur) {
		return
	}
	n := max(g.o.Budget.Max, g.o.Budget.PerNamespace)
	for i, key := range g.gate.Waiting(g.o.Now()) {
		if i >= n {
			break
		}
		g.queue.urgentAfter(key, 0)
	}
}

// release gives back the slot of a write that failed; forget drops key from
// the line (it has nothing to reload, or it is gone).
func (g *budgetGate) release(key workload.Key) {
	if g != nil {
		g.gate.Release(key)
	}
}

func (g *budgetGate) forget(key workload.Key) {
	if g != nil {
		g.gate.Forget(key)
	}
}

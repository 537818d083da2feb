package controller

import (
	"iter"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reloader-dev/reloader/controller/budget"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/workload"
)

// The rollout budget's side in the controller: what the caches say is
// rolling, the hold before a write, and waking the next reload when a
// rollout finishes. The order and the limits are budget.Gate's.

// budgetRecheck is how soon a held reload asks again; a rollout finishing
// wakes the first waiters sooner (wakeWaiters).
const budgetRecheck = 2 * time.Second

// ReasonRolloutWaiting: a due reload waits for a rollout slot.
const ReasonRolloutWaiting = "RolloutWaiting"

// ReasonRolloutStalled: a rollout the controller started passed its
// deadline and gave back its slot (budget.Stall).
const ReasonRolloutStalled = "ReloadRolloutStalled"

func (c *Controller) stripWorkload(obj any) (any, error) {
	if c.gate != nil {
		return workload.StripKeepingStatus(obj)
	}
	return workload.Strip(obj)
}

// holdForBudget asks the gate whether v's due reload may be written now.
// Held, it returns how soon to ask again, after the one Event, audit line
// and metric of the hold.
func (c *Controller) holdForBudget(v workload.View, d decide.Decision) time.Duration {
	if c.gate == nil || c.o.Webhook != nil || !d.Change.Rollout() || !budget.Gated(v.Kind) {
		return 0
	}
	key := v.Key()
	// Counting and admitting are one step: two workers counting before
	// either admits would both see the last free slot.
	c.budgetMu.Lock()
	now := c.o.Now()
	counts := c.rolloutCounts(key, now)
	verdict := c.gate.Admit(v, counts, now)
	c.budgetMu.Unlock()
	c.o.Metrics.RolloutsInProgress.Set(float64(counts.Cluster))
	c.o.Metrics.RolloutsWaiting.Set(float64(len(c.gate.Waiting(now))))
	if verdict.Admitted {
		return 0
	}
	reason := "max-concurrent-rollouts"
	where := "in the cluster"
	if verdict.Scope != "cluster" {
		reason, where = "max-concurrent-rollouts-per-namespace", "in namespace "+verdict.Scope
	}
	if verdict.First {
		c.o.Metrics.RolloutsHeld.Inc()
		c.o.Recorder.Eventf(eventObject(v), corev1.EventTypeNormal, ReasonRolloutWaiting,
			"Reload of %s '%s' in namespace '%s' for %s waits for a rollout slot: %d of %d rolling out %s (--%s), %d due earlier",
			v.Kind, key.Name, key.Namespace, describe(d.Applied), verdict.Rolling, verdict.Limit, where, reason, verdict.Ahead)
		c.o.Logger.Info("reload waits for a rollout slot", "workload", key.String(), "rolling", verdict.Rolling,
			"limit", verdict.Limit, "scope", verdict.Scope, "ahead", verdict.Ahead)
	}
	c.auditDeferred(v, d.Reloads, reason)
	return budgetRecheck
}

// rolloutCounts counts the rollouts holding a slot, but except's (the
// rules are budget.Count's), and tells of each rollout that passed its
// deadline once: an Event on the workload, a log line and the metric.
func (c *Controller) rolloutCounts(except workload.Key, now time.Time) budget.Counts {
	counts, stalls := c.gate.Count(c.gatedWorkloads(), except, now)
	for _, s := range stalls {
		msg := s.Message(now)
		c.o.Metrics.RolloutsStalled.Inc()
		c.o.Recorder.Event(eventObject(s.View), corev1.EventTypeWarning, ReasonRolloutStalled, msg)
		c.o.Logger.Warn("rollout passed its deadline; it no longer holds a rollout slot", "workload", s.View.Key().String(), "deadline", s.Deadline)
	}
	return counts
}

// gatedWorkloads yields the cached Deployments, StatefulSets and DaemonSets,
// each with whether the controller manages it.
func (c *Controller) gatedWorkloads() iter.Seq[budget.Workload] {
	return func(yield func(budget.Workload) bool) {
		o := c.decideOptions()
		for _, s := range c.scopes {
			for kind, inf := range s.workloads {
				if !budget.Gated(kind) {
					continue
				}
				for _, obj := range inf.GetIndexer().List() {
					v, err := workload.ViewOf(obj)
					if err != nil {
						continue
					}
					ns := v.Object.GetNamespace()
					managed := !o.NamespaceIgnored(ns) && c.namespaceSelected(ns) && budget.Managed(v, c.o.Names, c.o.AutoReloadAll)
					if !yield(budget.Workload{View: v, Managed: managed}) {
						return
					}
				}
			}
		}
	}
}

// wakeWaiters enqueues the reloads first in line when a rollout finishes,
// so a freed slot is taken now rather than at the next recheck.
func (c *Controller) wakeWaiters() {
	waiting := c.gate.Waiting(c.o.Now())
	n := max(c.o.Budget.Max, c.o.Budget.PerNamespace)
	for i, key := range waiting {
		if i >= n {
			break
		}
		c.lanes.Urgent(key)
		c.queue.Add(key)
	}
}

// rolloutFinished reports whether an update of a gated workload is the end
// of its rollout, for the handler to wake the waiters. Every update passes
// here, so the gate also learns from it when an admitted write shows.
func (c *Controller) rolloutFinished(old, cur any) bool {
	if c.gate == nil {
		return false
	}
	c.gate.Observe(cur)
	return budget.Rolling(old) && !budget.Rolling(cur)
}

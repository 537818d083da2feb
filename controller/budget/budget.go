// Package budget is the cluster-wide rollout budget
// (--max-concurrent-rollouts): which workloads are still rolling out, read
// from the status kube-controller-manager keeps, and which due reload may
// start next, in the order the reloads became due.
//
// It keeps no state of its own that a restart would need: what is rolling
// is read from the workloads, and a reload that waits is due again at the
// next sync, so a new leader rebuilds the queue from the caches.
package budget

import (
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/reloader-dev/reloader/controller/workload"
)

// Gated reports whether a reload of kind k waits for the budget: the kinds
// that roll their pods out gradually. A CronJob reload creates one Job, a Job
// is recreated, and custom kinds report progress in their own terms; none of
// them is held.
func Gated(k workload.Kind) bool {
	return k == workload.Deployment || k == workload.StatefulSet || k == workload.DaemonSet
}

// Rolling reports whether obj (a cached Deployment, StatefulSet or
// DaemonSet with its status) is rolling out: its controller has not seen
// its latest spec yet, or not every replica runs the latest template and is
// available. A paused Deployment, one whose rollout exceeded its progress
// deadline, and OnDelete StatefulSets and DaemonSets are not rolling: none
// of them progresses on its own, and counting them would hold every other
// reload until a person acts.
func Rolling(obj any) bool {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		if o.Generation > o.Status.ObservedGeneration {
			return true
		}
		if o.Spec.Paused || deadlineExceeded(o) {
			return false
		}
		want := replicas(o.Spec.Replicas)
		s := o.Status
		return s.UpdatedReplicas < want || s.Replicas > s.UpdatedReplicas || s.AvailableReplicas < want
	case *appsv1.StatefulSet:
		if o.Generation > o.Status.ObservedGeneration {
			return true
		}
		if o.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
			return false
		}
		want := replicas(o.Spec.Replicas)
		if ru := o.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil && *ru.Partition > 0 {
			// Only the ordinals at or above the partition are updated.
			want -= min(*ru.Partition, want)
		}
		s := o.Status
		return s.UpdatedReplicas < want || s.ReadyReplicas < replicas(o.Spec.Replicas)
	case *appsv1.DaemonSet:
		if o.Generation > o.Status.ObservedGeneration {
			return true
		}
		if o.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType {
			return false
		}
		s := o.Status
		return s.UpdatedNumberScheduled < s.DesiredNumberScheduled || s.NumberAvailable < s.DesiredNumberScheduled
	}
	return false
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

func deadlineExceeded(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return true
		}
	}
	return false
}

// Options are the limits; 0 is no limit.
type Options struct {
	// Max is the most workloads rolling out at once, cluster-wide.
	Max int
	// PerNamespace is the most rolling out at once in one namespace.
	PerNamespace int
}

// Enabled reports whether any limit is set.
func (o Options) Enabled() bool { return o.Max > 0 || o.PerNamespace > 0 }

// Verdict is the budget's answer for one due reload.
type Verdict struct {
	// Admitted: apply the reload now; its slot is held until the caches
	// show the write (Started) or the write failed (Release).
	Admitted bool
	// Rolling is how many workloads roll out now, in the limit that holds
	// the reload back (cluster or namespace); Limit is that limit and Scope
	// says which ("cluster" or the namespace).
	Rolling, Limit int
	Scope          string
	// Ahead is how many reloads that became due earlier wait before it.
	Ahead int
	// First is true the first time a reload is held since it became due,
	// for the one Event.
	First bool
}

// Counts are the workloads rolling out, cluster-wide and per namespace, as
// the caches show them, not counting the workload being decided.
type Counts struct {
	Cluster     int
	ByNamespace map[string]int
}

// Gate holds the reloads that wait for a slot, in the order they became due,
// and the slots of writes the caches do not show yet. Its methods are safe
// for concurrent use by the workers.
type Gate struct {
	o   Options
	mu  sync.Mutex
	due map[workload.Key]waiter
	// writes are the reloads admitted whose write the cache has not shown
	// yet: the workload's resourceVersion before the write.
	writes map[workload.Key]string
}

type waiter struct {
	since, seen time.Time
}

// stale is how long a waiter that no sync asked about again keeps its
// place: a workload deleted or no longer due stops being asked about.
const stale = time.Minute

// New builds a gate with the limits of o.
func New(o Options) *Gate {
	return &Gate{o: o, due: map[workload.Key]waiter{}, writes: map[workload.Key]string{}}
}

// Pending returns the resourceVersions of admitted writes per key, for the
// caller counting what rolls: a workload whose cached resourceVersion is
// still the one before the write counts as rolling, the write not seen yet.
func (g *Gate) Pending() map[workload.Key]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[workload.Key]string, len(g.writes))
	for k, rv := range g.writes {
		out[k] = rv
	}
	return out
}

// Seen tells the gate the cache shows key at a resourceVersion other than
// the one before its admitted write: the status now tells whether it rolls.
func (g *Gate) Seen(key workload.Key) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.writes, key)
}

// Admit decides whether key's due reload may start now, given what rolls
// (counts, not counting key itself). Reloads are admitted in the order they
// became due, then by key: a reload is held while the rolling workloads plus
// the earlier reloads still waiting fill its limit. Admitted, it holds a slot
// until Seen or Release; resourceVersion is the workload's before the write.
func (g *Gate) Admit(key workload.Key, resourceVersion string, counts Counts, now time.Time) Verdict {
	g.mu.Lock()
	defer g.mu.Unlock()
	w, waiting := g.due[key]
	if !waiting {
		w.since = now
	}
	w.seen = now
	g.due[key] = w
	var aheadAll, aheadNS int
	for k, o := range g.due {
		if k == key || now.Sub(o.seen) > stale {
			continue
		}
		if o.since.Before(w.since) || (o.since.Equal(w.since) && k.String() < key.String()) {
			aheadAll++
			if k.Namespace == key.Namespace {
				aheadNS++
			}
		}
	}
	v := Verdict{Admitted: true}
	if g.o.Max > 0 && counts.Cluster+aheadAll >= g.o.Max {
		v = Verdict{Rolling: counts.Cluster, Limit: g.o.Max, Scope: "cluster", Ahead: aheadAll}
	} else if n := counts.ByNamespace[key.Namespace]; g.o.PerNamespace > 0 && n+aheadNS >= g.o.PerNamespace {
		v = Verdict{Rolling: n, Limit: g.o.PerNamespace, Scope: key.Namespace, Ahead: aheadNS}
	}
	if v.Admitted {
		delete(g.due, key)
		g.writes[key] = resourceVersion
		return v
	}
	v.First = !waiting
	return v
}

// Release gives back the slot of an admitted reload whose write failed.
func (g *Gate) Release(key workload.Key) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.writes, key)
}

// Forget drops key from the queue: it is no longer due (applied by
// someone else, deleted, or its change reverted).
func (g *Gate) Forget(key workload.Key) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.due, key)
}

// Waiting returns the reloads waiting for a slot, earliest due first.
func (g *Gate) Waiting(now time.Time) []workload.Key {
	g.mu.Lock()
	defer g.mu.Unlock()
	var keys []workload.Key
	for k, w := range g.due {
		if now.Sub(w.seen) <= stale {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := g.due[keys[i]], g.due[keys[j]]
		if !a.since.Equal(b.since) {
			return a.since.Before(b.since)
		}
		return keys[i].String() < keys[j].String()
	})
	return keys
}

// Package budget is the cluster-wide rollout budget
// (--max-concurrent-rollouts): which rollouts hold a slot, read from the
// status kube-controller-manager keeps, and which due reload may start next,
// in the order the reloads became due.
//
// A slot is held only by a rollout the controller started, of a workload it
// manages (hold.go says it whole): the rollout of the pod template its own
// admitted write produced, while the workload carries the applied-hashes
// record and still asks to be reloaded, until the rollout finishes or passes
// its deadline (a Deployment's progressDeadlineSeconds, --rollout-deadline
// for StatefulSets and DaemonSets). Every slot is taken through the queue
// below, so no workload, managed or not, can hold one without waiting its
// turn, nor keep it longer than a deadline.
//
// What it must know across a restart is read from the workloads: the
// record, the status, the last-reload annotation. A reload that waits is due
// again at the next sync, so a new leader rebuilds the queue from the
// caches; a rollout found going when it first counts is taken as one a
// previous leader may have started (hold.go).
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
// them is held, except a declared kind that says how its progress is read
// (workload.Table.Tracked, which the controller asks besides).
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
	case *workload.Custom:
		return o.Rolling() // a declared kind's progress condition

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
	// Deadline is how long a StatefulSet or DaemonSet rollout holds its
	// slot (--rollout-deadline; 0: DefaultDeadline). They have no progress
	// deadline of their own; a Deployment's is its progressDeadlineSeconds.
	Deadline time.Duration
}

// DefaultDeadline is the default --rollout-deadline: the default
// progressDeadlineSeconds of a Deployment.
const DefaultDeadline = 10 * time.Minute

func (o Options) deadline() time.Duration {
	if o.Deadline > 0 {
		return o.Deadline
	}
	return DefaultDeadline
}

// Enabled reports whether any limit is set.
func (o Options) Enabled() bool { return o.Max > 0 || o.PerNamespace > 0 }

// Verdict is the budget's answer for one due reload.
type Verdict struct {
	// Admitted: apply the reload now; its slot is held by the write, then
	// by the rollout it starts, or given back if the write fails (Release).
	Admitted bool
	// Rolling is how many rollouts hold a slot now, in the limit that holds
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

// Counts are the rollouts holding a slot, cluster-wide and per namespace,
// as the caches show them, not counting the workload being decided.
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
	// writes are the reloads admitted whose write the caches do not show
	// yet; rollouts what the gate knows of each cached workload's rollout;
	// passes counts the Counts (hold.go).
	writes   map[workload.Key]write
	rollouts map[workload.Key]*rollout
	passes   uint64
}

type waiter struct {
	since, seen time.Time
}

// stale is how long a waiter that no sync asked about again keeps its
// place: a workload deleted or no longer due stops being asked about.
const stale = time.Minute

// New builds a gate with the limits of o.
func New(o Options) *Gate {
	return &Gate{o: o, due: map[workload.Key]waiter{}, writes: map[workload.Key]write{}, rollouts: map[workload.Key]*rollout{}}
}

// Admit decides whether v's due reload may start now, given what holds a
// slot (counts, not counting v itself). Reloads are admitted in the order
// they became due, then by key: a reload is held while the rollouts holding
// a slot plus the earlier reloads still waiting fill its limit. Admitted,
// its slot is held from now: v is the cached workload the write is made
// against, and its rollout is the controller's once the caches show the
// write (Observe, Count), until the write fails (Release).
func (g *Gate) Admit(v workload.View, counts Counts, now time.Time) Verdict {
	key := v.Key()
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
	verdict := Verdict{Admitted: true}
	if g.o.Max > 0 && counts.Cluster+aheadAll >= g.o.Max {
		verdict = Verdict{Rolling: counts.Cluster, Limit: g.o.Max, Scope: "cluster", Ahead: aheadAll}
	} else if n := counts.ByNamespace[key.Namespace]; g.o.PerNamespace > 0 && n+aheadNS >= g.o.PerNamespace {
		verdict = Verdict{Rolling: n, Limit: g.o.PerNamespace, Scope: key.Namespace, Ahead: aheadNS}
	}
	if verdict.Admitted {
		delete(g.due, key)
		// The write is guarded by this resourceVersion and changes the pod
		// template: it is one update, so it makes the next generation.
		g.writes[key] = write{resourceVersion: v.Object.GetResourceVersion(), generation: v.Object.GetGeneration() + 1, at: now, pass: g.passes}
		return verdict
	}
	verdict.First = !waiting
	return verdict
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

package budget

import (
	"fmt"
	"iter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Which rollouts hold a slot.
//
// A slot is held by a rollout, the rollout of one pod template to a
// workload's pods, when all of these hold:
//
//   - The controller started it: it is the rollout of the pod template the
//     controller's own admitted write produced (Admit notes the write;
//     Observe or Count finds it in the caches at the generation it made). A
//     later change of the template by anyone else is a new rollout, not the
//     controller's; a new generation with the same template (a scale, the
//     resume of the controller's pause) is the same rollout.
//   - The workload is managed (Managed): it carries the applied-hashes
//     record and still asks to be reloaded.
//   - Its status says it rolls (Rolling).
//   - It has not passed its deadline: for a Deployment, kube-controller-
//     manager's verdict on its progressDeadlineSeconds (the Progressing
//     condition says ProgressDeadlineExceeded); for a StatefulSet or
//     DaemonSet, Options.Deadline since the write. Past it the rollout frees
//     its slot, is reported once (Stall), and holds none again.
//
// Until its write shows in the caches, an admitted reload holds its slot
// anyway: the status cannot say yet that it rolls.
//
// Why the controller's own rollouts only: each of them took its slot
// through the queue, so no workload holds one without waiting its turn,
// whoever owns it, and an unavailable workload the controller never rolled
// (another team's StatefulSet that never gets ready) holds none.
//
// After a restart or a change of leader the gate knows no writes, and the
// objects do not say which generation the controller's last write made. So
// the first Count takes each managed workload it finds rolling as rolling
// for a previous leader: the limit is kept across the restart (counting
// fewer would start more rollouts than it allows), and the deadline still
// bounds each, counted from the workload's last-reload annotation when it
// has one (storm control writes it), else from that first Count. A workload
// first seen later was created since, and rolls for someone else until the
// controller writes to it.

// Workload is one cached Deployment, StatefulSet or DaemonSet, with its
// status, as Count reads it.
type Workload struct {
	View workload.View
	// Managed is Managed's answer, within the controller's namespace scope.
	Managed bool
}

// Managed reports whether the controller manages v: v carries the
// applied-hashes record (the controller adopted it) and still asks to be
// reloaded (a reload annotation, or autoReloadAll). The record alone is not
// enough: it stays on a workload whose annotations were removed.
func Managed(v workload.View, names annotations.Names, autoReloadAll bool) bool {
	meta := v.Object.GetAnnotations()
	if _, ok := meta[annotations.Applied]; !ok {
		return false
	}
	return names.Interested(annotations.Workload{Meta: meta, Template: v.Template.Annotations}, autoReloadAll)
}

// Stall is a rollout the controller started that passed its deadline: it no
// longer holds a slot. Count reports each once.
type Stall struct {
	View workload.View
	// Started is when the rollout started (the controller's write, or see
	// above for one found going after a restart).
	Started time.Time
	// Deadline is the one passed: a Deployment's progressDeadlineSeconds
	// (without progress), else Options.Deadline (since Started).
	Deadline time.Duration
}

// Message says what stalled for how long, for the Event on the workload.
func (s Stall) Message(now time.Time) string {
	k := s.View.Key()
	what := fmt.Sprintf("Rollout of %s '%s' in namespace '%s', started by a reload %s ago,", k.Kind, k.Name, k.Namespace, now.Sub(s.Started).Round(time.Second))
	how := fmt.Sprintf("has not finished within --rollout-deadline (%s)", s.Deadline)
	if k.Kind == workload.Deployment {
		how = fmt.Sprintf("made no progress for its progressDeadlineSeconds (%s)", s.Deadline)
	}
	return what + " " + how + ": it no longer holds a slot of the rollout budget (--max-concurrent-rollouts)"
}

// write is an admitted reload whose write the caches do not show yet.
type write struct {
	// resourceVersion is the workload's before the write, which guards it;
	// generation is the one the write makes.
	resourceVersion string
	generation      int64
	at              time.Time
	pass            uint64
}

// rollout is what the gate knows of a workload's current rollout.
type rollout struct {
	generation int64
	// template is the pod template rolled out, kept while ours.
	template *corev1.PodTemplateSpec
	started  time.Time
	// ours: the controller started it, and it has neither finished nor
	// stalled, and the workload is still managed.
	ours bool
	pass uint64
}

// Observe tells the gate of a workload as the caches show it now; the
// controller calls it on every update. An admitted write that shows makes
// its rollout the controller's at once, with the generation and template it
// made: by the next Count the workload may have changed again (a resumed
// pause, a scale, someone else's edit).
func (g *Gate) Observe(obj any) {
	v, err := workload.ViewOf(obj)
	if c, custom := obj.(*workload.Custom); err != nil || !Gated(v.Kind) && !(custom && c.Progress != nil) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.confirm(v)
}

// Count counts the rollouts holding a slot among ws (every cached
// Deployment, StatefulSet and DaemonSet in scope) but except's, the
// workload being decided, and returns the rollouts that passed their
// deadline since the last Count, each once. What it knows of workloads no
// longer cached is dropped.
func (g *Gate) Count(ws iter.Seq[Workload], except workload.Key, now time.Time) (Counts, []Stall) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.passes++
	counts := Counts{ByNamespace: map[string]int{}}
	var stalls []Stall
	for w := range ws {
		holds, stall := g.holds(w, now)
		if stall != nil {
			stalls = append(stalls, *stall)
		}
		if key := w.View.Key(); holds && key != except {
			counts.Cluster++
			counts.ByNamespace[key.Namespace]++
		}
	}
	for k, r := range g.rollouts {
		if r.pass != g.passes {
			delete(g.rollouts, k)
		}
	}
	for k, w := range g.writes {
		if w.pass != g.passes {
			delete(g.writes, k)
		}
	}
	return counts, stalls
}

// holds applies the rules above to w.
func (g *Gate) holds(w Workload, now time.Time) (bool, *Stall) {
	key := w.View.Key()
	if g.confirm(w.View) {
		wr := g.writes[key]
		// A write no update ever shows changed nothing: it stops holding
		// at the deadline, as its rollout would.
		if now.Sub(wr.at) <= g.o.deadline() {
			wr.pass = g.passes
			g.writes[key] = wr
			if r, ok := g.rollouts[key]; ok {
				r.pass = g.passes
			}
			return true, nil
		}
		delete(g.writes, key)
	}
	return g.track(w, now).judge(w, g.o.deadline(), now)
}

// confirm records the rollout of key's admitted write if v shows the write,
// and reports whether the write is still pending.
func (g *Gate) confirm(v workload.View) bool {
	key := v.Key()
	wr, ok := g.writes[key]
	if !ok {
		return false
	}
	if v.Object.GetResourceVersion() == wr.resourceVersion {
		return true
	}
	// The write was guarded by wr.resourceVersion: any other version is
	// the write's or a later one, or one that failed it (Release follows).
	delete(g.writes, key)
	r := &rollout{generation: v.Object.GetGeneration(), pass: g.passes}
	if r.generation == wr.generation {
		r.template, r.started, r.ours = v.Template, wr.at, true
	}
	g.rollouts[key] = r
	return false
}

// track brings what the gate knows of w's rollout up to date with w.
func (g *Gate) track(w Workload, now time.Time) *rollout {
	v := w.View
	gen := v.Object.GetGeneration()
	r, known := g.rollouts[v.Key()]
	switch {
	case !known:
		r = &rollout{generation: gen}
		g.rollouts[v.Key()] = r
		if g.passes == 1 && w.Managed && Rolling(v.Object) {
			g.adopt(r, v, now)
		}
	case gen != r.generation:
		if !r.ours || !apiequality.Semantic.DeepEqual(*r.template, *v.Template) {
			*r = rollout{} // a new template: someone else's rollout
		}
		r.generation = gen
	}
	if r.ours {
		r.template = v.Template // the newest object's, so older ones can go
	}
	r.pass = g.passes
	return r
}

// adopt takes a rollout found going at the first Count as the controller's
// (see above), unless it is past its deadline already.
func (g *Gate) adopt(r *rollout, v workload.View, now time.Time) {
	started := now
	if t, err := time.Parse(time.RFC3339Nano, v.Object.GetAnnotations()[decide.LastReload]); err == nil && t.Before(now) {
		started = t
	}
	if v.Kind != workload.Deployment && now.Sub(started) > g.o.deadline() {
		return
	}
	r.template, r.started, r.ours = v.Template, started, true
}

// judge says whether r holds a slot now, and returns its Stall when it has
// just passed its deadline.
func (r *rollout) judge(w Workload, deadline time.Duration, now time.Time) (bool, *Stall) {
	if !r.ours {
		return false, nil
	}
	v := w.View
	var stall *Stall
	switch d, isDeployment := v.Object.(*appsv1.Deployment); {
	case !w.Managed:
		// No longer the controller's to hold: its annotations were removed.
	case isDeployment && progressStalled(d):
		stall = &Stall{View: v, Started: r.started, Deadline: progressDeadline(d)}
	case Rolling(v.Object):
		if isDeployment || now.Sub(r.started) <= deadline {
			return true, nil
		}
		stall = &Stall{View: v, Started: r.started, Deadline: deadline}
	case isDeployment && d.Spec.Paused:
		return false, nil // its rollout goes on when it is resumed
	}
	// Finished, stalled or no longer managed: it holds no slot again.
	r.ours, r.template = false, nil
	return false, stall
}

// progressStalled: kube-controller-manager has seen d's latest spec and
// says its rollout made no progress within progressDeadlineSeconds.
func progressStalled(d *appsv1.Deployment) bool {
	return !d.Spec.Paused && d.Generation <= d.Status.ObservedGeneration && deadlineExceeded(d)
}

func progressDeadline(d *appsv1.Deployment) time.Duration {
	if s := d.Spec.ProgressDeadlineSeconds; s != nil {
		return time.Duration(*s) * time.Second
	}
	return 600 * time.Second // the API's default
}

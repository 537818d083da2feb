package budget

import (
	"iter"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/workload"
)

var t0 = time.Unix(100000, 0)

// managedMeta is what a workload the controller manages carries: a reload
// annotation and the applied-hashes record.
func managedMeta() map[string]string {
	return map[string]string{annotations.Defaults().Auto: "true", annotations.Applied: "{}"}
}

// template is a pod template whose reload variable is value.
func template(value string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "app", Env: []corev1.EnvVar{{Name: "STAKATER_APP_CONFIGMAP", Value: value}}}}}}
}

// sts is StatefulSet ns/db with one replica, managed, at generation 1 and
// resourceVersion "1", rolled out, its template reload variable "v1".
func sts(mutate ...func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", Generation: 1, ResourceVersion: "1", Annotations: managedMeta()},
		Spec:   appsv1.StatefulSetSpec{Replicas: ptr(int32(1)), Template: template("v1")},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, UpdatedReplicas: 1, ReadyReplicas: 1}}
	for _, m := range mutate {
		m(s)
	}
	return s
}

// reloaded is the StatefulSet after a write: generation 2, variable "v2",
// resourceVersion "2"; stuck leaves its new pod never ready.
func reloaded(s *appsv1.StatefulSet) {
	s.Generation, s.Status.ObservedGeneration, s.ResourceVersion = 2, 2, "2"
	s.Spec.Template = template("v2")
}
func stuck(s *appsv1.StatefulSet)     { s.Status.ReadyReplicas = 0 }
func unmanaged(s *appsv1.StatefulSet) { s.Annotations = nil }

// each is objs as Count reads them, managed as Managed says with the
// default annotation names.
func each(objs ...any) iter.Seq[Workload] {
	return func(yield func(Workload) bool) {
		for _, o := range objs {
			v, err := workload.ViewOf(o)
			if err != nil {
				panic(err)
			}
			if !yield(Workload{View: v, Managed: Managed(v, annotations.Defaults(), false)}) {
				return
			}
		}
	}
}

// How a rollout came about, before the Count that is judged.
type origin int

const (
	byWrite   origin = iota // the controller wrote it: the first Count saw it rolled out, then Admit
	atStart                 // the first Count found it going (a previous leader's, perhaps)
	bySomeone               // the first Count saw it rolled out, the next one changed by someone else
)

// holdsAfter drives a gate through origin (from the rolled-out sts() to
// now, at t0), then judges now at t0+after.
func holdsAfter(o origin, now any, after time.Duration) (Counts, []Stall) {
	g := New(Options{Max: 1, Deadline: 10 * time.Minute})
	none := workload.Key{}
	switch o {
	case byWrite:
		g.Count(each(sts()), none, t0)
		v, _ := workload.ViewOf(sts())
		g.Admit(v, Counts{}, t0)
	case atStart:
		g.Count(each(now), none, t0)
	case bySomeone:
		g.Count(each(sts()), none, t0)
		g.Count(each(now), none, t0)
	}
	return g.Count(each(now), none, t0.Add(after))
}

// Which rollouts hold a slot: only the controller's own, of a workload it
// manages, until it finishes or passes its deadline.
func TestOnlyTheControllersRolloutsOfManagedWorkloadsHoldASlot(t *testing.T) {
	lastReload := func(ago time.Duration) func(*appsv1.StatefulSet) {
		return func(s *appsv1.StatefulSet) { s.Annotations[decide.LastReload] = t0.Add(-ago).Format(time.RFC3339Nano) }
	}
	for name, tc := range map[string]struct {
		origin origin
		now    any
		after  time.Duration
		holds  bool
		stall  time.Duration // the deadline a Stall reports; 0: none
	}{
		"unmanaged, never ready, found at start":          {atStart, sts(unmanaged, stuck), time.Second, false, 0},
		"unmanaged, never ready, changed by someone":      {bySomeone, sts(unmanaged, reloaded, stuck), time.Second, false, 0},
		"managed, rolling for someone else":               {bySomeone, sts(reloaded, stuck), time.Second, false, 0},
		"managed, the controller's write not shown yet":   {byWrite, sts(), time.Second, true, 0},
		"managed, the controller's, within the deadline":  {byWrite, sts(reloaded, stuck), 9 * time.Minute, true, 0},
		"managed, the controller's, past the deadline":    {byWrite, sts(reloaded, stuck), 11 * time.Minute, false, 10 * time.Minute},
		"managed, the controller's, finished":             {byWrite, sts(reloaded), time.Second, false, 0},
		"the controller's, annotations removed since":     {byWrite, sts(reloaded, stuck, unmanaged), time.Second, false, 0},
		"managed, found going at start, within deadline":  {atStart, sts(stuck), 9 * time.Minute, true, 0},
		"managed, found going at start, past deadline":    {atStart, sts(stuck), 11 * time.Minute, false, 10 * time.Minute},
		"found going, last reload 11m ago: already past":  {atStart, sts(stuck, lastReload(11*time.Minute)), time.Second, false, 0},
		"found going, last reload 2m ago, 9m later: past": {atStart, sts(stuck, lastReload(2*time.Minute)), 9 * time.Minute, false, 10 * time.Minute},
		"the controller's, then a new template by someone": {byWrite, sts(reloaded, stuck, func(s *appsv1.StatefulSet) {
			s.Generation, s.ResourceVersion, s.Spec.Template = 3, "3", template("by hand")
		}), time.Second, false, 0},
		// Observe, on every update, sees the write first in the controller
		// (TestAScaleKeepsTheControllersRollout); without it, the template
		// the write made is unknown.
		"the controller's write first seen scaled, no update seen": {byWrite, sts(reloaded, stuck, func(s *appsv1.StatefulSet) {
			s.Generation, s.ResourceVersion, s.Spec.Replicas = 3, "3", ptr(int32(2))
		}), time.Second, false, 0},
	} {
		counts, stalls := holdsAfter(tc.origin, tc.now, tc.after)
		if got := counts.Cluster == 1; got != tc.holds || counts.ByNamespace["ns"] != counts.Cluster {
			t.Errorf("%s: counts %+v, want holding a slot %v", name, counts, tc.holds)
		}
		switch {
		case tc.stall == 0 && len(stalls) != 0:
			t.Errorf("%s: stalls %+v, want none", name, stalls)
		case tc.stall != 0 && (len(stalls) != 1 || stalls[0].Deadline != tc.stall):
			t.Errorf("%s: stalls %+v, want one past %s", name, stalls, tc.stall)
		}
	}
}

// A scale moves the generation but not the template: the Count right after
// the write sees the controller's rollout, and a later one still does.
func TestAScaleKeepsTheControllersRollout(t *testing.T) {
	g := New(Options{Max: 1})
	none := workload.Key{}
	g.Count(each(sts()), none, t0)
	v, _ := workload.ViewOf(sts())
	g.Admit(v, Counts{}, t0)
	g.Observe(sts(reloaded, stuck)) // the update that shows the write
	scaled := sts(reloaded, stuck, func(s *appsv1.StatefulSet) { s.Generation, s.ResourceVersion, s.Spec.Replicas = 3, "3", ptr(int32(2)) })
	if c, _ := g.Count(each(scaled), none, t0.Add(time.Second)); c.Cluster != 1 {
		t.Errorf("scaled after the write: %d holding, want the controller's rollout to", c.Cluster)
	}
}

// The update that shows the write may be followed by a resume before any
// Count: the Deployment the controller paused (pause-period) rolls for it
// once resumed, however long the pause, until kube-controller-manager says
// it made no progress within its progressDeadlineSeconds.
func TestAResumedDeploymentRollsForTheController(t *testing.T) {
	g := New(Options{Max: 1, Deadline: time.Minute})
	none := workload.Key{}
	d := func(gen int64, rv string, paused bool, tmpl string, status appsv1.DeploymentStatus) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", Generation: gen, ResourceVersion: rv, Annotations: managedMeta()},
			Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(1)), Paused: paused, Template: template(tmpl)}, Status: status}
	}
	done := appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1}
	g.Count(each(d(1, "1", false, "v1", done)), none, t0)
	v, _ := workload.ViewOf(d(1, "1", false, "v1", done))
	g.Admit(v, Counts{}, t0)
	g.Observe(d(2, "2", true, "v2", done)) // the write: new template, paused
	if c, _ := g.Count(each(d(2, "3", true, "v2", appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, AvailableReplicas: 1})), none, t0.Add(time.Minute)); c.Cluster != 0 {
		t.Errorf("paused: %d holding, want none (it does not roll)", c.Cluster)
	}
	resumed := appsv1.DeploymentStatus{ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: 1, AvailableReplicas: 1}
	if c, _ := g.Count(each(d(3, "4", false, "v2", resumed)), none, t0.Add(time.Hour)); c.Cluster != 1 {
		t.Errorf("resumed an hour later: %d holding, want the controller's rollout (a Deployment's deadline is its own)", c.Cluster)
	}
	resumed.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentProgressing, Status: "False", Reason: "ProgressDeadlineExceeded"}}
	c, stalls := g.Count(each(d(3, "5", false, "v2", resumed)), none, t0.Add(2*time.Hour))
	if c.Cluster != 0 || len(stalls) != 1 || stalls[0].Deadline != 600*time.Second {
		t.Errorf("past its progress deadline: %d holding, stalls %+v; want none holding, one stall past 10m0s", c.Cluster, stalls)
	}
}

// A stall is told once: later Counts neither tell it again nor give the
// slot back to the rollout; the Event says what and for how long.
func TestAStallIsToldOnce(t *testing.T) {
	g := New(Options{Max: 1, Deadline: 3 * time.Second})
	none := workload.Key{}
	g.Count(each(sts()), none, t0)
	v, _ := workload.ViewOf(sts())
	g.Admit(v, Counts{}, t0)
	var told []Stall
	for i := range 5 {
		c, stalls := g.Count(each(sts(reloaded, stuck)), none, t0.Add(time.Duration(i)*2*time.Second))
		told = append(told, stalls...)
		if want := i < 2; (c.Cluster == 1) != want {
			t.Errorf("at %ds: %d holding, want holding %v", 2*i, c.Cluster, want)
		}
	}
	if len(told) != 1 {
		t.Fatalf("told %d stalls, want 1", len(told))
	}
	want := "Rollout of StatefulSet 'db' in namespace 'ns', started by a reload 4s ago, has not finished within --rollout-deadline (3s)"
	if msg := told[0].Message(t0.Add(4 * time.Second)); !strings.HasPrefix(msg, want) {
		t.Errorf("message %q, want it to start %q", msg, want)
	}
}

// A failed write gives its slot back; a workload no longer cached is
// forgotten, and one cached again later was created since: it rolls for
// someone else.
func TestReleasedWritesAndForgottenWorkloadsHoldNoSlot(t *testing.T) {
	g := New(Options{Max: 1})
	none := workload.Key{}
	g.Count(each(sts()), none, t0)
	v, _ := workload.ViewOf(sts())
	g.Admit(v, Counts{}, t0)
	g.Release(v.Key())
	if c, _ := g.Count(each(sts()), none, t0); c.Cluster != 0 {
		t.Errorf("released: %d holding", c.Cluster)
	}
	g.Count(each(), none, t0) // deleted
	if c, _ := g.Count(each(sts(stuck)), none, t0); c.Cluster != 0 {
		t.Errorf("created again, never ready: %d holding, want none", c.Cluster)
	}
	// The workload being decided is judged but not counted.
	g = New(Options{Max: 1})
	if c, _ := g.Count(each(sts(stuck)), v.Key(), t0); c.Cluster != 0 {
		t.Errorf("except: %d holding", c.Cluster)
	}
}

// A workload is managed when it carries the record and still asks to be
// reloaded; either alone is not enough.
func TestManagedNeedsTheRecordAndAReloadAnnotation(t *testing.T) {
	auto := annotations.Defaults().Auto
	for name, tc := range map[string]struct {
		meta          map[string]string
		autoReloadAll bool
		want          bool
	}{
		"record and auto":                   {managedMeta(), false, true},
		"auto, not adopted yet (no record)": {map[string]string{auto: "true"}, false, false},
		"record, annotations removed":       {map[string]string{annotations.Applied: "{}"}, false, false},
		"record, --auto-reload-all":         {map[string]string{annotations.Applied: "{}"}, true, true},
		"nothing, --auto-reload-all":        {nil, true, false},
	} {
		v, _ := workload.ViewOf(sts(func(s *appsv1.StatefulSet) { s.Annotations = tc.meta }))
		if got := Managed(v, annotations.Defaults(), tc.autoReloadAll); got != tc.want {
			t.Errorf("%s: Managed = %v, want %v", name, got, tc.want)
		}
	}
}

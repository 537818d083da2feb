package workload

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every kind in the table has every column: a view, a strip, the names
// kubectl knows it by, and (for a custom resource) where it is served.
// Capabilities may be none.
func TestEveryKindHasEveryColumn(t *testing.T) {
	seen := map[string]Kind{}
	for _, s := range builtIn() {
		if s.kind == "" || s.is == nil || (s.caps&CustomResource == 0) != (s.template != nil) || s.strip == nil || len(s.aliases) == 0 {
			t.Errorf("%q: a column is empty: %+v", s.kind, s)
		}
		if pausable := s.caps&Pausable != 0; pausable != (s.paused != nil) {
			t.Errorf("%s: a Pausable kind needs a paused column, and only it has one", s.kind)
		}
		if custom := s.caps&CustomResource != 0; custom != (s.gvr.Resource != "") {
			t.Errorf("%s: a custom resource kind needs a GVR, and only it has one (%v)", s.kind, s.gvr)
		}
		for _, a := range strings.Fields(s.aliases) {
			if other, dup := seen[a]; dup {
				t.Errorf("alias %q names both %s and %s", a, other, s.kind)
			}
			seen[a] = s.kind
		}
	}
}

// A typed object is viewed as its kind, with its pod template; a custom
// workload as the kind its apiserver said; anything else is refused.
func TestViewOf(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "w", Namespace: "ns"}
	cj := &batchv1.CronJob{ObjectMeta: meta}
	for obj, want := range map[any]Kind{
		&appsv1.Deployment{ObjectMeta: meta}:  Deployment,
		&appsv1.StatefulSet{ObjectMeta: meta}: StatefulSet,
		&appsv1.DaemonSet{ObjectMeta: meta}:   DaemonSet,
		cj:                                    CronJob,
		&batchv1.Job{ObjectMeta: meta}:        Job,
		&Custom{TypeMeta: metav1.TypeMeta{Kind: "Rollout"}, ObjectMeta: meta}:          Rollout,
		&Custom{TypeMeta: metav1.TypeMeta{Kind: "DeploymentConfig"}, ObjectMeta: meta}: DeploymentConfig,
	} {
		v, err := ViewOf(obj)
		if err != nil || v.Kind != want || v.Key() != (Key{Kind: want, Namespace: "ns", Name: "w"}) || v.Template == nil {
			t.Errorf("ViewOf(%T): %+v, %v; want a %s", obj, v, err, want)
		}
	}
	if v, _ := ViewOf(cj); v.Template != &cj.Spec.JobTemplate.Spec.Template {
		t.Error("a CronJob's view is not its job template's pod template")
	}
	if _, err := ViewOf(&metav1.ObjectMeta{}); err == nil {
		t.Error("ViewOf accepted an object of no kind")
	}
}

// Strip empties the status of every kind but Job (a finished Job is not
// recreated) and drops managed fields of all.
func TestStrip(t *testing.T) {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}},
		Status: appsv1.DeploymentStatus{Replicas: 3}}
	j := &batchv1.Job{Status: batchv1.JobStatus{Succeeded: 1}}
	_, _ = Strip(d)
	_, _ = Strip(j)
	if d.Status.Replicas != 0 || d.ManagedFields != nil {
		t.Errorf("a stripped Deployment kept %+v, %v", d.Status, d.ManagedFields)
	}
	if j.Status.Succeeded != 1 {
		t.Error("a stripped Job lost its status")
	}
}

// Capabilities come from the table, so the decision asks the kind rather
// than naming it.
func TestCapabilities(t *testing.T) {
	for _, c := range []struct {
		k    Kind
		c    Capability
		want bool
	}{
		{Deployment, Pausable, true}, {StatefulSet, Pausable, false},
		{Rollout, RestartAt, true}, {Deployment, RestartAt, false},
		{Job, Recreates, true}, {CronJob, Recreates, false},
		{Rollout, CustomResource, true}, {DeploymentConfig, CustomResource, true}, {DaemonSet, CustomResource, false},
		{"Pod", Pausable, false},
	} {
		if got := c.k.Has(c.c); got != c.want {
			t.Errorf("%s.Has(%d) = %v", c.k, c.c, got)
		}
	}
	if got := Kinds(); len(got) != 5 || got[0] != Deployment || got[4] != Job {
		t.Errorf("Kinds() = %v, want the five built-in kinds in informer order", got)
	}
	for alias, want := range map[string]Kind{"deploy": Deployment, "STS": StatefulSet, "jobs": Job, "dc": DeploymentConfig} {
		if k, ok := ByAlias(alias); !ok || k != want {
			t.Errorf("ByAlias(%q) = %s, %v", alias, k, ok)
		}
	}
	paused := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Paused: true}}
	if v, _ := ViewOf(paused); !v.Paused() {
		t.Error("a paused Deployment's view is not paused")
	}
	if v, _ := ViewOf(&batchv1.Job{}); v.Paused() {
		t.Error("a Job's view is paused")
	}
	if _, ok := ByAlias("pod"); ok {
		t.Error("ByAlias accepted pod")
	}
}

package rollout

import (
	"encoding/json"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/workload"
)

func ptr[T any](v T) *T { return &v }

// Variable changes become one strategic-merge list per container, in the
// order the containers first appear; a removal is a "$patch: delete".
func TestEnvPatch(t *testing.T) {
	got := envPatch([]workload.EnvChange{
		{Container: "app", Name: "STAKATER_A_CONFIGMAP", Value: "h1"},
		{Container: "sidecar", Name: "STAKATER_B_SECRET", Remove: true},
		{Container: "app", Name: "STAKATER_C_SECRET", Value: "h3"},
	})
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"env":[{"name":"STAKATER_A_CONFIGMAP","value":"h1"},{"name":"STAKATER_C_SECRET","value":"h3"}],"name":"app"},` +
		`{"env":[{"$patch":"delete","name":"STAKATER_B_SECRET"}],"name":"sidecar"}]`
	if string(b) != want {
		t.Errorf("envPatch\n got %s\nwant %s", b, want)
	}
	if got := envPatch(nil); len(got) != 0 {
		t.Errorf("no changes give %v, want an empty list", got)
	}
}

// changeID names the Job a CronJob reload creates: the same change always
// gives the same name (a retry finds its Job), any difference another.
func TestChangeID(t *testing.T) {
	base := workload.Change{RecordKey: "r", Record: `{"configmap/a":"h1"}`,
		Env:                 []workload.EnvChange{{Container: "app", Name: "X", Value: "1"}, {Container: "app", Name: "Y", Value: "2"}},
		TemplateAnnotations: map[string]string{"k1": "v1", "k2": "v2"}}
	id := changeID(base)
	if len(id) != 10 {
		t.Fatalf("changeID %q: want 10 hex characters", id)
	}
	same := base
	same.Env = []workload.EnvChange{base.Env[1], base.Env[0]}
	if got := changeID(same); got != id {
		t.Errorf("reordered variables give %s, want %s", got, id)
	}
	for name, c := range map[string]workload.Change{
		"another value":    {Record: base.Record, Env: []workload.EnvChange{{Container: "app", Name: "X", Value: "9"}, base.Env[1]}, TemplateAnnotations: base.TemplateAnnotations},
		"a removal":        {Record: base.Record, Env: []workload.EnvChange{{Container: "app", Name: "X", Value: "1", Remove: true}, base.Env[1]}, TemplateAnnotations: base.TemplateAnnotations},
		"another record":   {Record: `{"configmap/a":"h2"}`, Env: base.Env, TemplateAnnotations: base.TemplateAnnotations},
		"other annotation": {Record: base.Record, Env: base.Env, TemplateAnnotations: map[string]string{"k1": "v1"}},
	} {
		if changeID(c) == id {
			t.Errorf("%s gives the same id %s", name, id)
		}
	}
}

func cronJob(name string) *batchv1.CronJob {
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "cj-uid"}}
	cj.Spec.JobTemplate.Labels = map[string]string{"team": "a"}
	cj.Spec.JobTemplate.Annotations = map[string]string{"note": "kept"}
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app",
		Env: []corev1.EnvVar{{Name: "STAKATER_A_CONFIGMAP", Value: "old"}}}}
	return cj
}

// A CronJob reload runs its job template, with the change applied, as a
// manual Job the CronJob owns, named after the change.
func TestJobFromCronJob(t *testing.T) {
	cj := cronJob("nightly")
	c := workload.Change{Record: "rec", Env: []workload.EnvChange{{Container: "app", Name: "STAKATER_A_CONFIGMAP", Value: "new"}}}
	job := JobFromCronJob(cj, c)
	if want := "nightly-" + changeID(c); job.Name != want || job.Namespace != "ns" {
		t.Errorf("Job %s/%s, want ns/%s", job.Namespace, job.Name, want)
	}
	if job.Annotations["cronjob.kubernetes.io/instantiate"] != "manual" || job.Annotations["note"] != "kept" {
		t.Errorf("annotations %v: want the manual marker and the template's own", job.Annotations)
	}
	if job.Labels["team"] != "a" {
		t.Errorf("labels %v: want the template's", job.Labels)
	}
	if len(job.OwnerReferences) != 1 || job.OwnerReferences[0].UID != "cj-uid" || job.OwnerReferences[0].Kind != "CronJob" ||
		job.OwnerReferences[0].Controller == nil || !*job.OwnerReferences[0].Controller {
		t.Errorf("owner %+v: want the CronJob as controller", job.OwnerReferences)
	}
	if got := job.Spec.Template.Spec.Containers[0].Env[0].Value; got != "new" {
		t.Errorf("variable %q, want the change's value", got)
	}
	if got := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Env[0].Value; got != "old" {
		t.Errorf("the CronJob's own template was changed to %q", got)
	}
	long := JobFromCronJob(cronJob("a-very-long-cronjob-name-that-goes-on-and-on-and-on-and-on-x"), c)
	if len(long.Name) > 63 {
		t.Errorf("Job name %q is %d characters, over the 63 a label value allows", long.Name, len(long.Name))
	}
	dots := JobFromCronJob(cronJob("abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxy.-z"), c)
	if want := "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxy-" + changeID(c); dots.Name != want {
		t.Errorf("Job name %q, want %q: the cut prefix must not end in '.' or '-'", dots.Name, want)
	}
}

// A Job reload recreates it: same object with the change, without what the
// apiserver generated for the old one, so the create is accepted.
func TestRecreatedJob(t *testing.T) {
	old := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "migrate", Namespace: "ns", UID: "u1", ResourceVersion: "42", Generation: 3,
		CreationTimestamp: metav1.Now(), ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		Labels:      map[string]string{"team": "a", batchv1.ControllerUidLabel: "u1", batchv1.JobNameLabel: "migrate", "job-name": "migrate", "controller-uid": "u1"},
		Annotations: map[string]string{"gone": "x", "kept": "y"}}}
	old.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: "u1"}}
	old.Spec.ManualSelector = ptr(false)
	old.Spec.Template.Labels = map[string]string{"team": "a", batchv1.ControllerUidLabel: "u1", batchv1.JobNameLabel: "migrate", "job-name": "migrate", "controller-uid": "u1"}
	old.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app"}}
	old.Status.Succeeded = 1
	c := workload.Change{RecordKey: "reloader.dev/applied-hashes", Record: "rec",
		MetaAnnotations:     map[string]*string{"gone": nil, "added": ptr("z")},
		TemplateAnnotations: map[string]string{"reloader.stakater.com/last-reloaded-from": "src"},
		Env:                 []workload.EnvChange{{Container: "app", Name: "STAKATER_A_CONFIGMAP", Value: "h"}}}
	job := RecreatedJob(old, c)
	if job.UID != "" || job.ResourceVersion != "" || job.Generation != 0 || !job.CreationTimestamp.IsZero() || job.ManagedFields != nil {
		t.Errorf("server-set metadata kept: %+v", job.ObjectMeta)
	}
	if job.Spec.Selector != nil || job.Spec.ManualSelector != nil || job.Status.Succeeded != 0 {
		t.Errorf("selector %v, manualSelector %v, status %+v: want them cleared", job.Spec.Selector, job.Spec.ManualSelector, job.Status)
	}
	for _, labels := range []map[string]string{job.Labels, job.Spec.Template.Labels} {
		if len(labels) != 1 || labels["team"] != "a" {
			t.Errorf("labels %v: want only the user's", labels)
		}
	}
	want := map[string]string{"reloader.dev/applied-hashes": "rec", "kept": "y", "added": "z"}
	if len(job.Annotations) != len(want) {
		t.Errorf("annotations %v, want %v", job.Annotations, want)
	}
	for k, v := range want {
		if job.Annotations[k] != v {
			t.Errorf("annotation %s=%q, want %q", k, job.Annotations[k], v)
		}
	}
	if job.Spec.Template.Annotations["reloader.stakater.com/last-reloaded-from"] != "src" {
		t.Errorf("template annotations %v: want the change's", job.Spec.Template.Annotations)
	}
	if env := job.Spec.Template.Spec.Containers[0].Env; len(env) != 1 || env[0].Value != "h" {
		t.Errorf("env %v: want the reload variable", env)
	}
	if old.UID != "u1" || old.Labels["job-name"] != "migrate" || len(old.Spec.Template.Spec.Containers[0].Env) != 0 {
		t.Error("the cached Job was modified")
	}
}

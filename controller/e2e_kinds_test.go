package controller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

func usesConfigMap(app, cm string) corev1.PodTemplateSpec {
	t := reloadertest.PodTemplate(app, corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromConfigMap(cm)}})
	return t
}

func templateEnv(t corev1.PodTemplateSpec, name string) string {
	for _, c := range t.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}

// StatefulSets and DaemonSets are patched in place: their template gains the
// variable and their generation moves exactly once.
func TestStatefulSetAndDaemonSetArePatched(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("shared", map[string]string{"k": "1"}))
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Annotations: auto()},
		Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Template: usesConfigMap("db", "shared"),
		},
	}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Annotations: auto()},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: usesConfigMap("agent", "shared"),
		},
	}
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := startReloader(t, "", "--namespaces="+ns)
	r.waitIdle(t, 2)
	gen := func() (int64, int64, string, string) {
		s, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d, err := cs.AppsV1().DaemonSets(ns).Get(ctx, "agent", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s.Generation, d.Generation, templateEnv(s.Spec.Template, "STAKATER_SHARED_CONFIGMAP"), templateEnv(d.Spec.Template, "STAKATER_SHARED_CONFIGMAP")
	}
	if sg, dg, _, _ := gen(); sg != 1 || dg != 1 {
		t.Fatalf("recording the baseline changed the spec: generations %d %d", sg, dg)
	}
	updateConfigMapData(t, cs, ns, "shared", map[string]string{"k": "2"})
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		sg, dg, se, de := gen()
		return sg == 2 && dg == 2 && se != "" && se == de, fmt.Sprintf("generations %d %d, variables %q %q", sg, dg, se, de)
	})
	r.waitIdle(t, 4)
	time.Sleep(500 * time.Millisecond)
	if sg, dg, _, _ := gen(); sg != 2 || dg != 2 {
		t.Fatalf("rolled more than once: generations %d %d", sg, dg)
	}
}

// A CronJob reload creates one Job from its template, marked as a manual
// instantiation and owned by the CronJob, carrying the new hash.
func TestCronJobReloadCreatesAJob(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("nightly", map[string]string{"k": "1"}))
	suspend := true
	tmpl := usesConfigMap("report", "nightly")
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "report", Annotations: auto()},
		Spec: batchv1.CronJobSpec{
			Schedule: "0 3 * * *",
			Suspend:  &suspend, // only our reload may create Jobs
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"team": "x"}},
				Spec:       batchv1.JobSpec{Template: tmpl},
			},
		},
	}
	created, err := cs.BatchV1().CronJobs(ns).Create(ctx, cj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := startReloader(t, "", "--namespaces="+ns)
	r.waitIdle(t, 1)
	if jobs := listJobs(t, cs, ns); len(jobs) != 0 {
		t.Fatalf("adopting a CronJob created %d Jobs", len(jobs))
	}
	updateConfigMapData(t, cs, ns, "nightly", map[string]string{"k": "2"})
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		return len(listJobs(t, cs, ns)) == 1, fmt.Sprintf("%d Jobs, want 1", len(listJobs(t, cs, ns)))
	})
	r.waitIdle(t, 2)
	time.Sleep(500 * time.Millisecond)
	jobs := listJobs(t, cs, ns)
	if len(jobs) != 1 {
		t.Fatalf("%d Jobs after one change, want 1", len(jobs))
	}
	job := jobs[0]
	if job.Annotations["cronjob.kubernetes.io/instantiate"] != "manual" {
		t.Errorf("Job annotations %v lack cronjob.kubernetes.io/instantiate=manual", job.Annotations)
	}
	if len(job.OwnerReferences) != 1 || job.OwnerReferences[0].UID != created.UID || job.OwnerReferences[0].Kind != "CronJob" {
		t.Errorf("Job owner references %+v, want the CronJob", job.OwnerReferences)
	}
	if job.Labels["team"] != "x" {
		t.Errorf("Job labels %v lack the job template's labels", job.Labels)
	}
	if templateEnv(job.Spec.Template, "STAKATER_NIGHTLY_CONFIGMAP") == "" {
		t.Error("Job template lacks STAKATER_NIGHTLY_CONFIGMAP")
	}
}

// A Job reload deletes the Job and creates it again with the new hash and
// without the selector and labels the apiserver generated for the old one.
func TestJobReloadRecreatesIt(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	old := createBatchJob(t, cs, ns)
	r := startReloader(t, "", "--namespaces="+ns)
	r.waitIdle(t, 1)
	updateConfigMapData(t, cs, ns, "batch-config", map[string]string{"k": "2"})
	var recreated batchv1.Job
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, "batch", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		recreated = *j
		return j.UID != old.UID, "Job not recreated yet"
	})
	if templateEnv(recreated.Spec.Template, "STAKATER_BATCH_CONFIG_CONFIGMAP") == "" {
		t.Fatalf("recreated Job lacks the variable: %+v", recreated.Spec.Template.Spec.Containers)
	}
	if recreated.Spec.Selector == nil || recreated.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] != string(recreated.UID) {
		t.Fatalf("recreated Job's selector %v is not the one generated for it", recreated.Spec.Selector)
	}
	if _, ok := recreated.Annotations["reloader.dev/applied-hashes"]; !ok {
		t.Fatal("recreated Job lacks the applied-hashes record, so it would be recreated again")
	}
	r.waitIdle(t, 3)
	time.Sleep(500 * time.Millisecond)
	if j, err := cs.BatchV1().Jobs(ns).Get(ctx, "batch", metav1.GetOptions{}); err != nil || j.UID != recreated.UID {
		t.Fatalf("Job recreated more than once (err %v)", err)
	}
}

// createBatchJob creates the opted-in Job "batch" using the ConfigMap
// "batch-config".
func createBatchJob(t *testing.T, cs kubernetes.Interface, ns string) *batchv1.Job {
	t.Helper()
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("batch-config", map[string]string{"k": "1"}))
	tmpl := usesConfigMap("batch", "batch-config")
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "batch", Annotations: auto()}, Spec: batchv1.JobSpec{Template: tmpl}}
	created, err := cs.BatchV1().Jobs(ns).Create(context.Background(), job, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return created
}

func updateConfigMapData(t *testing.T, cs kubernetes.Interface, ns, name string, data map[string]string) {
	t.Helper()
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(context.Background(), reloadertest.ConfigMap(name, data), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func listJobs(t *testing.T, cs kubernetes.Interface, ns string) []batchv1.Job {
	t.Helper()
	l, err := cs.BatchV1().Jobs(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

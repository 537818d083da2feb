package controller

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

func TestLastWriteIsTheNewestManagedFieldsTime(t *testing.T) {
	c := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1, t2 := metav1.NewTime(c.Add(time.Hour)), metav1.NewTime(c.Add(2*time.Hour))
	m := &metav1.ObjectMeta{CreationTimestamp: c, ManagedFields: []metav1.ManagedFieldsEntry{{Time: &t2}, {Time: &t1}, {}}}
	if got := lastWrite(m); !got.Equal(t2.Time) {
		t.Fatalf("lastWrite = %v, want %v", got, t2)
	}
	if got := lastWrite(&metav1.ObjectMeta{CreationTimestamp: c}); !got.Equal(c.Time) {
		t.Fatalf("without managedFields lastWrite = %v, want the creation %v", got, c)
	}
}

// An object enters the informer's index before the workload handler runs its
// Add, so a ConfigMap changed right after a Deployment's creation can enqueue
// the Deployment first. That sync must wait for the Add, which records the
// birth: judged without it, the change was adopted as the baseline and lost
// (about once in 50 under -race in TestChangeRightAfterCreationIsNeverLost).
func TestASyncBeforeTheWorkloadsAddWaitsForIt(t *testing.T) {
	created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", UID: "u1", ResourceVersion: "100",
		CreationTimestamp: metav1.NewTime(created), Annotations: map[string]string{"reloader.stakater.com/auto": "true"}}}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", EnvFrom: []corev1.EnvFromSource{
		{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}}}}
	// Changed in the Deployment's creation second, one write later.
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-config", Namespace: "apps", ResourceVersion: "101",
		CreationTimestamp: metav1.NewTime(created.Add(-time.Hour))}, Data: map[string]string{"k": "after"}}
	cs := fake.NewClientset(d.DeepCopy(), cm.DeepCopy())
	c, err := New(cs, Options{
		Namespaces: []string{"apps"},
		Metrics:    metrics.New(prometheus.NewRegistry(), metrics.Options{}),
		Recorder:   record.NewFakeRecorder(10),
	})
	if err != nil {
		t.Fatal(err)
	}
	entry, err := c.stripConfig(cm)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.scopes["apps"].config[refs.ConfigMap].GetIndexer().Add(entry); err != nil {
		t.Fatal(err)
	}
	if err := c.scopes["apps"].workloads[workload.Deployment].GetIndexer().Add(d); err != nil {
		t.Fatal(err)
	}
	key := workload.Key{Kind: workload.Deployment, Namespace: "apps", Name: "web"}
	ctx := context.Background()
	writes := func() []string {
		var w []string
		for _, a := range cs.Actions() {
			if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
				w = append(w, a.GetVerb()+" "+a.GetResource().Resource)
			}
		}
		return w
	}

	if _, err := c.sync(ctx, key); err != nil {
		t.Fatal(err)
	}
	if w := writes(); len(w) != 0 {
		t.Fatalf("the sync before the Deployment's Add wrote %v, want nothing: it adopted the change as the baseline", w)
	}

	c.workloadHandler().OnAdd(d, false)
	if _, err := c.sync(ctx, key); err != nil {
		t.Fatal(err)
	}
	got, err := cs.AppsV1().Deployments("apps").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := hash.ConfigMap(cm.Data, nil)
	if v, _ := reloadertest.EnvOf(got, "app", EnvVarName(refs.ConfigMap, "app-config")); v != want {
		t.Fatalf("after the Add, %s = %q, want %q: the change made after the creation was not rolled", EnvVarName(refs.ConfigMap, "app-config"), v, want)
	}
}

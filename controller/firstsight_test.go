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
// The write that changed a resource's content is named by the manager that
// owns a key of its data, not by one that owns other fields or only the map
// itself, even when both wrote within the same second (the creator keeps
// data's "." after a rotation job changed every key).
func TestTheChangeIsAttributedToTheManagerOwningTheChangedKeys(t *testing.T) {
	at := func(s int) *metav1.Time { v := metav1.NewTime(time.Unix(1_800_000_000+int64(s), 0)); return &v }
	entry := func(manager string, op metav1.ManagedFieldsOperationType, s int, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, Time: at(s), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	for _, tc := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		want    string
	}{
		{"rotation in the creation's second", []metav1.ManagedFieldsEntry{
			entry("argocd-controller", metav1.ManagedFieldsOperationUpdate, 0, `{"f:data":{".":{}},"f:type":{}}`),
			entry("secret-rotator", metav1.ManagedFieldsOperationUpdate, 0, `{"f:data":{"f:password":{}}}`)}, "secret-rotator"},
		{"a later label edit is not a content change", []metav1.ManagedFieldsEntry{
			entry("kubectl-client-side-apply", metav1.ManagedFieldsOperationUpdate, 0, `{"f:data":{".":{},"f:token":{}}}`),
			entry("kubectl-label", metav1.ManagedFieldsOperationUpdate, 5, `{"f:metadata":{"f:labels":{"f:team":{}}}}`)}, "kubectl-client-side-apply"},
		{"the newest of two content owners", []metav1.ManagedFieldsEntry{
			entry("flux", metav1.ManagedFieldsOperationApply, 3, `{"f:data":{"f:a":{}}}`),
			entry("vault-agent", metav1.ManagedFieldsOperationUpdate, 9, `{"f:binaryData":{"f:b":{}}}`)}, "vault-agent"},
		{"no content owner", []metav1.ManagedFieldsEntry{
			entry("kubectl", metav1.ManagedFieldsOperationUpdate, 2, `{"f:metadata":{"f:annotations":{"f:data":{}}}}`)}, ""},
		{"an entry that is not an object", []metav1.ManagedFieldsEntry{
			entry("odd", metav1.ManagedFieldsOperationUpdate, 2, `[]`)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &metav1.ObjectMeta{CreationTimestamp: *at(0), ManagedFields: tc.entries}
			written, manager, _ := newestWrite(m)
			if manager != tc.want {
				t.Errorf("attributed to %q, want %q", manager, tc.want)
			}
			if !written.Equal(lastWrite(m)) {
				t.Errorf("the last write %v is not lastWrite's %v", written, lastWrite(m))
			}
		})
	}
}

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
	want := hash.SHA1.ConfigMap(cm.Data, nil)
	if v, _ := reloadertest.EnvOf(got, "app", EnvVarName(refs.ConfigMap, "app-config")); v != want {
		t.Fatalf("after the Add, %s = %q, want %q: the change made after the creation was not rolled", EnvVarName(refs.ConfigMap, "app-config"), v, want)
	}
}

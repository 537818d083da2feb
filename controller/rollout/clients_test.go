package rollout

import (
	"context"
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/reloader-dev/reloader/controller/workload"
)

// Every kind the controller reloads is in the table: built-in kinds with an
// informer and a reader, custom kinds with the resource the dynamic client
// reaches.
func TestKindTable(t *testing.T) {
	objs := map[workload.Kind]runtime.Object{
		workload.Deployment:  &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"}},
		workload.StatefulSet: &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"}},
		workload.DaemonSet:   &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"}},
		workload.CronJob:     &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"}},
		workload.Job:         &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"}},
	}
	var list []runtime.Object
	for _, o := range objs {
		list = append(list, o)
	}
	cs := fake.NewClientset(list...)
	f := informers.NewSharedInformerFactory(cs, 0)
	for _, k := range workload.Kinds() {
		if Informer(k, f) == nil {
			t.Errorf("%s: no informer", k)
		}
		if _, ok := workload.GVR(k); ok {
			t.Errorf("%s: a built-in kind has a custom resource", k)
		}
		v, err := Get(context.Background(), cs, nil, k, "ns", "w")
		if err != nil || v.Kind != k || v.Object.GetName() != "w" {
			t.Errorf("Get %s: %v, %v", k, v.Key(), err)
		}
	}
	for _, k := range []workload.Kind{workload.Rollout, workload.DeploymentConfig} {
		if gvr, ok := workload.GVR(k); !ok || gvr.Resource == "" {
			t.Errorf("%s: no custom resource", k)
		}
		if Informer(k, f) != nil {
			t.Errorf("%s: a custom kind has a typed informer", k)
		}
		if _, err := Get(context.Background(), cs, nil, k, "ns", "w"); err == nil || !strings.Contains(err.Error(), "no dynamic client") {
			t.Errorf("Get %s without a dynamic client: %v", k, err)
		}
	}
	if _, err := Get(context.Background(), cs, nil, "Pod", "ns", "w"); err == nil || !strings.Contains(err.Error(), "not a kind the controller reloads") {
		t.Errorf("Get Pod: %v", err)
	}
	_, err := Get(context.Background(), cs, nil, workload.Deployment, "ns", "missing")
	if !apierrors.IsNotFound(errors.Unwrap(err)) || !strings.Contains(err.Error(), "Deployment ns/missing") {
		t.Errorf("a missing Deployment: %v, want a not-found error naming it", err)
	}
}

// Every kind the model knows has a row here, and the row has the columns its
// kind needs: a built-in kind its informer, reader and patch; a custom kind
// none of those (the dynamic client reaches it), but an apply.
func TestEveryKindHasAClient(t *testing.T) {
	for _, k := range workload.All() {
		c, ok := clients()[k]
		if !ok || c.apply == nil {
			t.Errorf("%s: no client or no apply", k)
			continue
		}
		builtIn := !k.Has(workload.CustomResource)
		if (c.informer != nil) != builtIn || (c.get != nil) != builtIn || (c.patch != nil) != builtIn {
			t.Errorf("%s: built-in %v, but informer/get/patch set: %v/%v/%v", k, builtIn, c.informer != nil, c.get != nil, c.patch != nil)
		}
	}
	if len(clients()) != len(workload.All()) {
		t.Errorf("%d clients for %d kinds", len(clients()), len(workload.All()))
	}
}

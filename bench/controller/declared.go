package main

// -declared-share: a contestant that is the controller again, run with
// --workload-kind for a CloneSet-shaped kind, on scenarios in which that
// share of the workloads changed are of the kind. It is judged against the
// controller without it (targets.go): a declared kind must not cost
// latency or memory.

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// declaredKind is the kind of the declared share: the CloneSet shape the
// controller's, the chart's and explain's tests install.
func declaredKind() reloadertest.DeclaredKind { return reloadertest.CloneSetKind() }

// declaredFlag is what the declared contestant adds to -controller.
func declaredFlag() string { return " " + declaredKind().Flag() }

// isDeclared says whether, in the declared run, scenario workload i is of
// the declared kind: share of them, spread evenly over the indices so that
// the latency scenario's round robin and every burst have their share.
func isDeclared(share float64, i int) bool {
	return int(float64(i+1)*share) > int(float64(i)*share)
}

// declaredCount is how many of n workloads are of the declared kind.
func declaredCount(share float64, n int) int { return int(float64(n) * share) }

func cloneName(i int) string          { return fmt.Sprintf("clone-%04d", i) }
func cloneConfigMapName(i int) string { return fmt.Sprintf("cfg-clone-%04d", i) }

// dynamicConfig is the admin identity for the dynamic client, in JSON (a
// custom resource has no protobuf), at the driver's rate limit.
func (c *cluster) dynamicConfig() *rest.Config {
	cfg := rest.CopyConfig(c.cp.Admin)
	cfg.QPS, cfg.Burst = 5000, 10000
	cfg.UserAgent = "reloader-bench-driver"
	return cfg
}

// createDeclared installs the kind and, for every workload i the declared
// run takes of it, a ConfigMap and a workload of the kind using it as
// Deployment i uses its own: both exist for every contestant, and only the
// declared run changes these.
func (c *cluster) createDeclared(ctx context.Context, cfg Config) error {
	k := declaredKind()
	dyn, err := dynamic.NewForConfig(c.dynamicConfig())
	if err != nil {
		return fmt.Errorf("building the dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(c.dynamicConfig())
	if err != nil {
		return fmt.Errorf("building the discovery client: %w", err)
	}
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	if _, err := crds.Create(ctx, k.CRD(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("installing the CRD of %s: %w", k.Kind, err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, err := disc.ServerResourcesForGroupVersion(k.Group + "/" + k.Version)
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s to be served: %w", k.GVR(), err)
	}
	c.cloneConfigMaps = make([]*corev1.ConfigMap, cfg.Workloads)
	return parallel(ctx, cfg.Workloads, cfg.CreateWorkers, func(ctx context.Context, i int) error {
		if !isDeclared(cfg.DeclaredShare, i) {
			return nil
		}
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: cloneConfigMapName(i), Namespace: workloadNS},
			Data:       map[string]string{"value": "initial"},
		}
		created, err := c.driver.CoreV1().ConfigMaps(workloadNS).Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating ConfigMap %s: %w", cm.Name, err)
		}
		c.cloneConfigMaps[i] = created
		ctr := usesConfigMap(cm.Name, "value", readsKey(i))
		ctr.Name, ctr.Image = containerApp, "registry.invalid/bench:1"
		labels := map[string]string{"app": cloneName(i)}
		u, err := k.Workload(cloneName(i), map[string]string{autoKey: "true"}, corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{ctr}},
		})
		if err != nil {
			return err
		}
		if err := unstructured.SetNestedStringMap(u.Object, labels, "spec", "selector", "matchLabels"); err != nil {
			return fmt.Errorf("setting the selector of %s: %w", cloneName(i), err)
		}
		if _, err := dyn.Resource(k.GVR()).Namespace(workloadNS).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating %s %s: %w", k.Kind, cloneName(i), err)
		}
		return nil
	})
}

// startDeclared has the tracker watch the workloads of the declared kind
// too: a spec change (the kind has no status subresource, so nothing but a
// spec change moves its generation) is a reload.
func (t *tracker) startDeclared(ctx context.Context, cfg *rest.Config) error {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building the dynamic client: %w", err)
	}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, workloadNS, nil)
	inf := f.ForResource(declaredKind().GVR()).Informer()
	observe := func(o any) {
		now := time.Now()
		if u, ok := o.(*unstructured.Unstructured); ok {
			t.observeAt(now, u.GetName(), u.GetGeneration())
		}
	}
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, o any) { observe(o) },
	})
	if err != nil {
		return fmt.Errorf("watching %s: %w", declaredKind().GVR(), err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("syncing the watch of %s: %w", declaredKind().GVR(), ctx.Err())
	}
	return nil
}

// bumpClone changes the ConfigMap of workload i of the declared kind with
// one UPDATE.
func (c *cluster) bumpClone(ctx context.Context, i int, value string) error {
	cm := c.cloneConfigMaps[i].DeepCopy()
	cm.Data["value"] = value
	updated, err := c.driver.CoreV1().ConfigMaps(workloadNS).Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("updating ConfigMap %s: %w", cm.Name, err)
	}
	c.cloneConfigMaps[i] = updated
	return nil
}

// workload is scenario workload i of this run: the name the tracker knows
// it by, and the change that reloads it. In the declared run, the declared
// share of them are of the declared kind.
func (e *env) workload(i int) (string, func(context.Context, string) error) {
	if e.declared && isDeclared(e.cfg.DeclaredShare, i) {
		return cloneName(i), func(ctx context.Context, v string) error { return e.c.bumpClone(ctx, i, v) }
	}
	return deploymentName(i), func(ctx context.Context, v string) error { return e.c.bumpConfigMap(ctx, i, v) }
}

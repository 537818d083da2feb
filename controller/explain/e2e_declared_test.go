package explain_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/reloader-dev/reloader/controller/explain"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// explain knows a kind the controller was given with --workload-kind (from
// its reloader-meta-info), reads the workload's template at the declared
// path, and says what the controller does about it.
func TestExplainADeclaredKind(t *testing.T) {
	requireControlPlane(t)
	ctx := context.Background()
	cs := cp.AdminClient(t)
	kind := reloadertest.PodSetKind()
	dyn := kind.Install(t, cp.Admin)
	gvr := kind.GVR()
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, configMap("app-config", nil, nil))
	kind.Create(t, dyn, ns, kind.Object(t, "web", map[string]string{auto: "true"}, usesAppConfig()))
	c := startController(t, ns, kind.Flag())
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		u, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, ok := u.GetAnnotations()["reloader.dev/applied-hashes"]
		return ok, "PodSet web has no record"
	})
	for _, target := range []string{"podset/web", "podsets." + gvr.Group + "/web", "PodSet/web"} {
		args := []string{"explain", target, "-n", ns, "--controller-namespace=" + ns, "--readyz-url=" + c.readyz}
		r := runExplain(t, reloaderBin, cp.AdminKubeconfig, args...)
		if r.code != explain.ExitOK || !strings.Contains(r.stdout, "up to date: every watched resource is applied") ||
			!strings.Contains(r.stdout, `ConfigMap app-config: watched: reloader.stakater.com/auto="true" on the metadata`) {
			t.Fatalf("explain %s: exit %d\n%s%s", target, r.code, r.stdout, r.stderr)
		}
	}
	r := runExplain(t, reloaderBin, cp.AdminKubeconfig, "explain", "podset/web", "-n", ns, "--options-from=flags")
	if r.code != explain.ExitUsage || !strings.Contains(r.stderr, `"podset" is not a kind the controller reloads`) {
		t.Fatalf("without the controller's options, a declared kind is unknown: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// installCRD installs a CRD that keeps any field, for kind at gvr, and
// waits until it is served.
func installCRD(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, kind string) {
	t.Helper()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": gvr.Resource + "." + gvr.Group},
		"spec": map[string]any{"group": gvr.Group, "scope": "Namespaced",
			"names": map[string]any{"kind": kind, "plural": gvr.Resource, "singular": strings.ToLower(kind), "listKind": kind + "List"},
			"versions": []any{map[string]any{"name": gvr.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}},
	}}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cs := cp.AdminClient(t)
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		_, err := cs.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		return err == nil, fmt.Sprint(err)
	})
}

// usesAppConfig is a pod template whose container takes its environment
// from the ConfigMap app-config.
func usesAppConfig() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.invalid/app:1",
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}}}}}}
}

// explain reads a Rollout with a workloadRef from its Deployment's
// template, as the controller does.
func TestExplainARolloutWithWorkloadRef(t *testing.T) {
	requireControlPlane(t)
	ctx := context.Background()
	cs := cp.AdminClient(t)
	dyn, err := dynamic.NewForConfig(cp.Admin)
	if err != nil {
		t.Fatal(err)
	}
	rollouts := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	installCRD(t, dyn, rollouts, "Rollout")
	ns := cp.Namespace(t)
	zero := int32(0)
	d := deployment("web", nil, nil, envFromCM("app-config"))
	d.Spec.Replicas = &zero
	reloadertest.MustCreate(t, cs, ns, configMap("app-config", nil, nil), d)
	ro := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "web", "annotations": map[string]any{auto: "true"}},
		"spec":     map[string]any{"workloadRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}}}
	if _, err := dyn.Resource(rollouts).Namespace(ns).Create(ctx, ro, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c := startController(t, ns, "--is-Argo-Rollouts=true")
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		u, err := dyn.Resource(rollouts).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, ok := u.GetAnnotations()["reloader.dev/applied-hashes"]
		return ok, "Rollout web has no record"
	})
	r := runExplain(t, reloaderBin, cp.AdminKubeconfig, "explain", "rollout/web", "-n", ns, "--controller-namespace="+ns, "--readyz-url="+c.readyz)
	if r.code != explain.ExitOK || !strings.Contains(r.stdout, "up to date: every watched resource is applied") ||
		!strings.Contains(r.stdout, `ConfigMap app-config: watched: reloader.stakater.com/auto="true" on the metadata`) {
		t.Fatalf("explain rollout/web: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

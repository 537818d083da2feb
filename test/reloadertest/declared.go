package reloadertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// DeclaredKind is a custom workload kind a test installs and declares with
// --workload-kind: its pod template at Path, its containers and their env
// lists keyed by name (as controller-gen writes a PodTemplateSpec's), so
// server-side apply merges them as it does a Deployment's. The controller's,
// the chart's and explain's tests install the same two kinds from here, so
// they cannot drift apart.
type DeclaredKind struct {
	Group, Version, Kind, Plural string
	Path                         []string
	// Status: the CRD has a status subresource, which its operator writes.
	Status bool
}

// CloneSetKind is shaped as OpenKruise's CloneSet: its template at
// .spec.template, the default path.
func CloneSetKind() DeclaredKind {
	return DeclaredKind{"apps.kruise.io", "v1alpha1", "CloneSet", "clonesets", []string{"spec", "template"}, false}
}

// PodSetKind keeps its template at a path other than the default,
// .spec.workload.podTemplate.
func PodSetKind() DeclaredKind {
	return DeclaredKind{"e2e.reloader.dev", "v1", "PodSet", "podsets", []string{"spec", "workload", "podTemplate"}, false}
}

// GVR is where the kind is served.
func (k DeclaredKind) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Plural}
}

// Flag is the kind's --workload-kind, naming its template path when it is
// not the default.
func (k DeclaredKind) Flag() string {
	f := "--workload-kind=" + k.Group + "/" + k.Version + "/" + k.Plural + ",kind=" + k.Kind
	if strings.Join(k.Path, ".") != "spec.template" {
		f += ",template=." + strings.Join(k.Path, ".")
	}
	return f
}

// CRD is the kind's CustomResourceDefinition.
func (k DeclaredKind) CRD() *unstructured.Unstructured {
	byName := func(items map[string]any) map[string]any {
		return map[string]any{"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"name"}, "items": items}
	}
	keyed := func(props map[string]any) map[string]any {
		props["name"] = map[string]any{"type": "string"}
		return map[string]any{"type": "object", "required": []any{"name"}, "x-kubernetes-preserve-unknown-fields": true, "properties": props}
	}
	node := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": map[string]any{
		"spec": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": map[string]any{
			"containers": byName(keyed(map[string]any{"env": byName(keyed(map[string]any{}))})),
		}},
	}}
	for i := len(k.Path) - 1; i >= 0; i-- {
		node = map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": map[string]any{k.Path[i]: node}}
	}
	version := map[string]any{"name": k.Version, "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": node}}
	if k.Status {
		version["subresources"] = map[string]any{"status": map[string]any{}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": k.Plural + "." + k.Group},
		"spec": map[string]any{
			"group": k.Group, "scope": "Namespaced",
			"names":    map[string]any{"kind": k.Kind, "plural": k.Plural, "singular": strings.ToLower(k.Kind), "listKind": k.Kind + "List"},
			"versions": []any{version},
		},
	}}
}

// Install installs the kind's CRD on the apiserver cfg reaches, unless it
// is there already (another test installed it), and waits until the kind
// is served.
func (k DeclaredKind) Install(t testing.TB, cfg *rest.Config) dynamic.Interface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Create(context.Background(), k.CRD(), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("installing CRD %s.%s: %v", k.Plural, k.Group, err)
	}
	Eventually(t, 30*time.Second, func() (bool, string) {
		l, err := disc.ServerResourcesForGroupVersion(k.Group + "/" + k.Version)
		if err != nil {
			return false, err.Error()
		}
		for _, r := range l.APIResources {
			if r.Name == k.Plural {
				return true, ""
			}
		}
		return false, k.Plural + " not served yet"
	})
	return dyn
}

// Object is a workload of the kind with tmpl at its path and one replica.
func (k DeclaredKind) Object(t testing.TB, name string, ann map[string]string, tmpl corev1.PodTemplateSpec) *unstructured.Unstructured {
	t.Helper()
	u, err := k.Workload(name, ann, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Workload is Object for a caller without a test (the controller bench).
func (k DeclaredKind) Workload(name string, ann map[string]string, tmpl corev1.PodTemplateSpec) (*unstructured.Unstructured, error) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&tmpl)
	if err != nil {
		return nil, fmt.Errorf("converting the pod template of %s %s: %w", k.Kind, name, err)
	}
	annAny := map[string]any{}
	for key, v := range ann {
		annAny[key] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": k.Group + "/" + k.Version, "kind": k.Kind,
		"metadata": map[string]any{"name": name, "annotations": annAny},
		"spec":     map[string]any{"replicas": int64(1)},
	}}
	if err := unstructured.SetNestedField(u.Object, raw, k.Path...); err != nil {
		return nil, fmt.Errorf("placing the pod template of %s %s at %s: %w", k.Kind, name, strings.Join(k.Path, "."), err)
	}
	return u, nil
}

// Create creates u, a workload of the kind, in ns.
func (k DeclaredKind) Create(t testing.TB, dyn dynamic.Interface, ns string, u *unstructured.Unstructured) {
	t.Helper()
	if _, err := dyn.Resource(k.GVR()).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s %s/%s: %v", k.Kind, ns, u.GetName(), err)
	}
}

// Env is the value of the environment variable named variable in any
// container of u's template at the kind's path ("" when none has it).
func (k DeclaredKind) Env(u *unstructured.Unstructured, variable string) string {
	containers, _, _ := unstructured.NestedSlice(u.Object, append(append([]string{}, k.Path...), "spec", "containers")...)
	for _, c := range containers {
		env, _, _ := unstructured.NestedSlice(c.(map[string]any), "env")
		for _, e := range env {
			if m := e.(map[string]any); m["name"] == variable {
				v, _ := m["value"].(string)
				return v
			}
		}
	}
	return ""
}

// State is what a test reads of a declared workload: its generation (which
// a spec change moves: without a status subresource, nothing else does),
// the reload variable at the kind's template path, and its record.
func (k DeclaredKind) State(t testing.TB, dyn dynamic.Interface, ns, name, variable string) (gen int64, value, record string) {
	t.Helper()
	u, err := dyn.Resource(k.GVR()).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(fmt.Errorf("reading %s %s/%s: %w", k.Kind, ns, name, err))
	}
	return u.GetGeneration(), k.Env(u, variable), u.GetAnnotations()["reloader.dev/applied-hashes"]
}

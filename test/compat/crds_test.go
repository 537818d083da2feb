package compat

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// crd is a stand-in for a third party's CRD: the apiserver serves the kind
// and keeps any field; the tests need the API, not the operator.
type crd struct{ group, version, kind, plural string }

var (
	monitoringCRDs = []crd{
		{"monitoring.coreos.com", "v1", "ServiceMonitor", "servicemonitors"},
		{"monitoring.coreos.com", "v1", "PodMonitor", "podmonitors"},
	}
	argoCRDs = []crd{{"argoproj.io", "v1alpha1", "Rollout", "rollouts"}}
	csiCRDs  = []crd{
		{"secrets-store.csi.x-k8s.io", "v1", "SecretProviderClass", "secretproviderclasses"},
		{"secrets-store.csi.x-k8s.io", "v1", "SecretProviderClassPodStatus", "secretproviderclasspodstatuses"},
	}
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// installCRDs creates the CRDs (already there is fine) and waits until
// discovery serves them.
func installCRDs(t *testing.T, ctx context.Context, defs ...crd) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Admin)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": d.plural + "." + d.group},
			"spec": map[string]any{
				"group": d.group, "scope": "Namespaced",
				"names": map[string]any{"kind": d.kind, "plural": d.plural, "singular": strings.ToLower(d.kind), "listKind": d.kind + "List"},
				"versions": []any{map[string]any{"name": d.version, "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
			},
		}}
		if _, err := dyn.Resource(crdGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("installing CRD %s.%s: %v", d.plural, d.group, err)
		}
	}
	cs := cp.AdminClient(t)
	reloadertest.Eventually(t, time.Minute, func() (bool, string) {
		for _, d := range defs {
			list, err := cs.Discovery().ServerResourcesForGroupVersion(d.group + "/" + d.version)
			if err != nil {
				return false, d.group + "/" + d.version + " not served yet: " + err.Error()
			}
			found := false
			for _, r := range list.APIResources {
				found = found || r.Name == d.plural
			}
			if !found {
				return false, d.plural + "." + d.group + " not served yet"
			}
		}
		return true, ""
	})
}

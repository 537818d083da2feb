package compat

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/reloader-dev/reloader/charts"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// Asked to reload Argo Rollouts and CSI classes on a cluster without their
// CRDs, the controller warns (log, Event on its Deployment, metric 0) and
// reloads everything else; once the CRDs are installed it watches them
// without a restart and reloads a Rollout.
func TestMissingOptionalAPIsDegradeAndAreWatchedOnceInstalled(t *testing.T) {
	needControlPlane(t)
	ctx := testContext(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	for _, d := range []crd{argoCRDs[0], csiCRDs[0]} {
		if _, err := cs.Discovery().ServerResourcesForGroupVersion(d.group + "/" + d.version); err == nil {
			t.Fatalf("%s/%s is already served: this test needs it missing at start", d.group, d.version)
		}
	}
	rel := charts.Release{Name: "optional", Namespace: ns, Values: map[string]any{"reloader": map[string]any{
		"watchGlobally": false, "isArgoRollouts": true, "enableCSIIntegration": true}}}
	c := runAsChart(t, ctx, rel, "--api-discovery-interval=500ms")

	for _, api := range []string{"argo-rollouts", "secrets-store-csi"} {
		if v, ok := sum(scrape(t, c), "reloader_optional_api_available", `api="`+api+`"`); !ok || v != 0 {
			t.Errorf("reloader_optional_api_available{api=%q} = %v (present %v), want 0", api, v, ok)
		}
	}
	if !strings.Contains(c.Tail(200), "does not serve rollouts.argoproj.io/v1alpha1") {
		t.Errorf("no warning about the missing Rollout API in the log:\n%s", c.Tail(40))
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=APIUnavailable"})
		if err != nil {
			return false, err.Error()
		}
		seen := map[string]bool{}
		for _, e := range evs.Items {
			if e.Type == corev1.EventTypeWarning && e.InvolvedObject.Kind == "Deployment" && e.InvolvedObject.Name == "optional-reloader" {
				seen[strings.Fields(e.Message)[0]] = true
			}
		}
		return seen["--is-Argo-Rollouts=true,"] && seen["--enable-csi-integration=true,"], "no APIUnavailable Warning Events for both APIs on Deployment optional-reloader"
	})

	// Everything else reloads.
	cm := configMap("settings", map[string]string{"k": "1"})
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, autoDeployment("web", "settings", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAdopted(t, ctx, cs, ns, "web")
	cm.Data["k"] = "2"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReloaded(t, ctx, cs, ns, "web", "STAKATER_SETTINGS_CONFIGMAP")

	// The CRDs arrive; the same process picks them up.
	installCRDs(t, ctx, append(append([]crd{}, argoCRDs...), csiCRDs...)...)
	reloadertest.Eventually(t, time.Minute, func() (bool, string) {
		s := scrape(t, c)
		argo, _ := sum(s, "reloader_optional_api_available", `api="argo-rollouts"`)
		csi, _ := sum(s, "reloader_optional_api_available", `api="secrets-store-csi"`)
		return argo == 1 && csi == 1, "the controller did not start watching the APIs once served"
	})
	dyn, err := dynamic.NewForConfig(cp.Admin)
	if err != nil {
		t.Fatal(err)
	}
	rollouts := schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	tmpl, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&autoDeployment("canary", "settings", nil).Spec.Template)
	if err != nil {
		t.Fatal(err)
	}
	rollout := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "canary", "annotations": map[string]any{"reloader.stakater.com/auto": "true"}},
		"spec":     map[string]any{"replicas": int64(1), "template": tmpl},
	}}
	if _, err := dyn.Resource(rollouts).Namespace(ns).Create(ctx, rollout, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, time.Minute, func() (bool, string) {
		u, err := dyn.Resource(rollouts).Namespace(ns).Get(ctx, "canary", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return u.GetAnnotations()["reloader.dev/applied-hashes"] != "", "the controller never adopted Rollout canary"
	})
	cm.Data["k"] = "3"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, time.Minute, func() (bool, string) {
		u, err := dyn.Resource(rollouts).Namespace(ns).Get(ctx, "canary", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		for _, ctr := range containers {
			env, _, _ := unstructured.NestedSlice(ctr.(map[string]any), "env")
			for _, e := range env {
				if e.(map[string]any)["name"] == "STAKATER_SETTINGS_CONFIGMAP" {
					return true, ""
				}
			}
		}
		return false, "Rollout canary was not reloaded after its CRD appeared"
	})
	evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=APIAvailable"})
	if err != nil || len(evs.Items) == 0 {
		t.Errorf("no APIAvailable Event once the APIs were served (%v)", err)
	}
}

package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// docs/argo-workloadref.md as written: an Argo Rollout whose
// spec.workloadRef names a Deployment has no template of its own; its
// references are found in the Deployment's template, and its reload is
// written there, which is what Argo Rollouts watches for a new revision.
// The Rollout keeps the record; the Deployment rolls once and stays at zero
// replicas; the Rollout gets no template.
func TestRolloutWithWorkloadRefReloadsThroughItsDeployment(t *testing.T) {
	requireControlPlane(t)
	dyn := installCRDs(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	sh := docBlocks(t, "argo-workloadref.md", "sh")
	if len(sh) != 1 || !strings.HasPrefix(sh[0], "reloader ") {
		t.Fatalf("docs/argo-workloadref.md: want one sh block running reloader, got %q", sh)
	}
	objs := docObjects(t, "argo-workloadref.md")
	if len(objs) != 2 || objs[0].GetKind() != "Deployment" || objs[1].GetKind() != "Rollout" {
		t.Fatalf("docs/argo-workloadref.md: want a Deployment and a Rollout, got %d objects", len(objs))
	}
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("web-config", map[string]string{"k": "1"}))
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	for i, gvr := range []schema.GroupVersionResource{deployments, rolloutGVR} {
		if _, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, objs[i], metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r := startReloader(t, "", append([]string{"--namespaces=" + ns}, strings.Fields(strings.TrimPrefix(sh[0], "reloader "))...)...)
	waitRevision(t, cs, ns, "web", 1, 0)
	rolloutRecord := func() string {
		u, err := dyn.Resource(rolloutGVR).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return u.GetAnnotations()["reloader.dev/applied-hashes"]
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		return rolloutRecord() != "", "the Rollout has no record: its references were not found in its Deployment"
	})
	r.waitIdle(t, 2)
	before := rolloutRecord()
	updateConfigMapData(t, cs, ns, "web-config", map[string]string{"k": "2"})
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		v, _ := reloadertest.EnvOf(getDeployment(t, cs, ns, "web"), "web", "STAKATER_WEB_CONFIG_CONFIGMAP")
		return v != "" && rolloutRecord() != before, fmt.Sprintf("Deployment variable %q, Rollout record %q (was %q)", v, rolloutRecord(), before)
	})
	waitRevision(t, cs, ns, "web", 2, 500*time.Millisecond)
	u, err := dyn.Resource(rolloutGVR).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedMap(u.Object, "spec", "template"); found {
		t.Fatal("the Rollout got a template of its own: Argo Rollouts refuses a Rollout with both a template and a workloadRef")
	}
	if got := getDeployment(t, cs, ns, "web"); got.Spec.Replicas == nil || *got.Spec.Replicas != 0 {
		t.Fatalf("the Deployment was scaled: %v", got.Spec.Replicas)
	}
	if n := r.metric(t, `reloader_reload_executed_total{success="true"}`); n != 1 {
		t.Fatalf("%v reloads, want 1 (the Rollout's)", n)
	}
}

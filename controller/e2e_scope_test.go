package controller_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// --namespace-selector (cluster-wide watches, filtered by namespace labels)
// reloads only in selected namespaces, and picks a namespace up as soon as it
// gains the label; --resource-label-selector makes only labelled ConfigMaps
// count, filtered by the apiserver.
func TestSelectors(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	selected, other := cp.Namespace(t), cp.Namespace(t)
	label := "reloader-test-" + selected
	setLabel := func(ns string) {
		n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		n.Labels["selected-by"] = label
		if _, err := cs.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	setLabel(selected)
	for _, ns := range []string{selected, other} {
		labelled := reloadertest.ConfigMap("labelled", map[string]string{"k": "1"})
		labelled.Labels = map[string]string{"reload": "yes"}
		reloadertest.MustCreate(t, cs, ns, labelled)
		reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("unlabelled", map[string]string{"k": "1"}))
		createDeployment(t, cs, ns, reloadertest.Deployment("uses-labelled", auto(), usesConfigMap("uses-labelled", "labelled")))
		createDeployment(t, cs, ns, reloadertest.Deployment("uses-unlabelled", auto(), usesConfigMap("uses-unlabelled", "unlabelled")))
	}
	r := startReloader(t, "", "--namespace-selector=selected-by:"+label, "--resource-label-selector=reload=yes")
	waitRecorded(t, cs, selected, "uses-labelled")
	update := func(ns, name, v string) {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["k"] = v
		if _, err := cs.CoreV1().ConfigMaps(ns).Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range []string{selected, other} {
		update(ns, "labelled", "2")
		update(ns, "unlabelled", "2")
	}
	waitRevision(t, cs, selected, "uses-labelled", 2, 0)
	r.waitIdle(t, 2)
	time.Sleep(time.Second)
	for ns, want := range map[string]int64{selected: 1, other: 1} {
		if rev := revision(t, cs, ns, "uses-unlabelled"); rev != want {
			t.Errorf("%s/uses-unlabelled rolled (revision %d) for an unlabelled ConfigMap", ns, rev)
		}
	}
	if rev := revision(t, cs, other, "uses-labelled"); rev != 1 {
		t.Fatalf("%s/uses-labelled rolled (revision %d) in a namespace that is not selected", other, rev)
	}

	// Labelling the other namespace brings it in scope: the controller adopts
	// its workloads (baseline, no rollout) and reloads them from then on.
	setLabel(other)
	waitRecorded(t, cs, other, "uses-labelled")
	if rev := revision(t, cs, other, "uses-labelled"); rev != 1 {
		t.Fatalf("adopting a newly selected namespace rolled its workloads (revision %d)", rev)
	}
	update(other, "labelled", "3")
	waitRevision(t, cs, other, "uses-labelled", 2, 0)
}

// --resources-to-ignore and --ignored-workload-types turn whole kinds off.
func TestIgnoredKinds(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("cfg", map[string]string{"k": "1"}))
	createDeployment(t, cs, ns, reloadertest.Deployment("web", auto(), usesConfigMap("web", "cfg")))
	r := startReloader(t, "", "--namespaces="+ns, "--resources-to-ignore=configMaps", "--ignored-workload-types=jobs,cronjobs")
	r.waitIdle(t, 1)
	updateConfigMapData(t, cs, ns, "cfg", map[string]string{"k": "2"})
	time.Sleep(time.Second)
	r.waitIdle(t, 1)
	if rev := revision(t, cs, ns, "web"); rev != 1 {
		t.Fatalf("a ConfigMap change rolled web (revision %d) with configMaps ignored", rev)
	}
}

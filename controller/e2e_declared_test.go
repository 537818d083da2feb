package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// declaredCRD is a declared workload kind (reloadertest.DeclaredKind, the
// fixture the chart's and explain's tests install too) on this package's
// control plane.
type declaredCRD struct{ reloadertest.DeclaredKind }

// The two shapes of the acceptance: OpenKruise's CloneSet (template at
// .spec.template) and a kind whose template is elsewhere.
func cloneSetKind() declaredCRD { return declaredCRD{reloadertest.CloneSetKind()} }
func podSetKind() declaredCRD   { return declaredCRD{reloadertest.PodSetKind()} }

// install installs the kind's CRD unless it is there and waits until it is
// served.
func (k declaredCRD) install(t *testing.T) dynamic.Interface {
	t.Helper()
	return k.Install(t, cp.Admin)
}

// rolledOnce waits for the variable at the kind's template path, then checks
// the workload's spec changed exactly once.
func (k declaredCRD) rolledOnce(t *testing.T, r *reloaderProc, dyn dynamic.Interface, ns, name, variable string, syncs int) {
	t.Helper()
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		gen, v, _ := k.State(t, dyn, ns, name, variable)
		return gen == 2 && v != "", fmt.Sprintf("%s %s/%s: generation %d, %s=%q", k.Kind, ns, name, gen, variable, v)
	})
	r.waitIdle(t, syncs)
	time.Sleep(500 * time.Millisecond)
	if gen, _, _ := k.State(t, dyn, ns, name, variable); gen != 2 {
		t.Fatalf("%s %s/%s rolled more than once: generation %d", k.Kind, ns, name, gen)
	}
}

// A declared kind is reloaded like a Deployment: a change of the ConfigMap
// its template uses writes the reload variable at the kind's own template
// path, once, under the controller's field manager.
func TestDeclaredKindsRollOnceOnAChange(t *testing.T) {
	requireControlPlane(t)
	ns := cp.Namespace(t)
	cs := cp.AdminClient(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("cfg", map[string]string{"k": "1"}))
	for _, k := range []declaredCRD{cloneSetKind(), podSetKind()} {
		k.Create(t, k.install(t), ns, k.Object(t, "web", auto(), usesConfigMap("web", "cfg")))
	}
	dyn := podSetKind().install(t)
	r := startReloader(t, "", "--namespaces="+ns, cloneSetKind().Flag(), podSetKind().Flag())
	r.waitIdle(t, 2)
	for _, k := range []declaredCRD{cloneSetKind(), podSetKind()} {
		if gen, _, record := k.State(t, dyn, ns, "web", "STAKATER_CFG_CONFIGMAP"); gen != 1 || record == "" {
			t.Fatalf("%s: adopting it changed its spec or wrote no record: generation %d, record %q", k.Kind, gen, record)
		}
	}
	updateConfigMapData(t, cs, ns, "cfg", map[string]string{"k": "2"})
	for _, k := range []declaredCRD{cloneSetKind(), podSetKind()} {
		k.rolledOnce(t, r, dyn, ns, "web", "STAKATER_CFG_CONFIGMAP", 4)
	}
	u, err := dyn.Resource(podSetKind().GVR()).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedMap(u.Object, "spec", "template"); found {
		t.Fatal("the PodSet got a spec.template: the reload was written to the default path, not the declared one")
	}
	if !strings.Contains(fieldOwners(u.GetManagedFields()), "reloader") {
		t.Fatalf("no field manager of the controller's in %s", fieldOwners(u.GetManagedFields()))
	}
}

// With per-key reloads, a change to a key the declared workload does not
// read rolls nothing; a change to the key it reads rolls it once.
func TestDeclaredKindPerKeyRollsOnlyForUsedKeys(t *testing.T) {
	requireControlPlane(t)
	ns := cp.Namespace(t)
	cs := cp.AdminClient(t)
	dyn := podSetKind().install(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("keys", map[string]string{"USED": "1", "OTHER": "1"}))
	tmpl := reloadertest.PodTemplate("keyed", corev1.Container{Name: "app", Env: []corev1.EnvVar{{Name: "USED",
		ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "keys"}, Key: "USED"}}}}})
	podSetKind().Create(t, dyn, ns, podSetKind().Object(t, "keyed", auto(), tmpl))
	r := startReloaderEnv(t, "", []string{"POD_NAMESPACE=" + ns}, "--namespaces="+ns, "--reload-on-used-keys-only", podSetKind().Flag())
	r.waitIdle(t, 1)
	_, _, record := podSetKind().State(t, dyn, ns, "keyed", "STAKATER_KEYS_CONFIGMAP")
	updateConfigMapData(t, cs, ns, "keys", map[string]string{"USED": "1", "OTHER": "2"})
	r.waitIdle(t, 2)
	time.Sleep(500 * time.Millisecond)
	if gen, v, got := podSetKind().State(t, dyn, ns, "keyed", "STAKATER_KEYS_CONFIGMAP"); gen != 1 || v != "" || got != record {
		t.Fatalf("an unused key rolled the PodSet: generation %d, variable %q, record %q (was %q)", gen, v, got, record)
	}
	updateConfigMapData(t, cs, ns, "keys", map[string]string{"USED": "2", "OTHER": "2"})
	podSetKind().rolledOnce(t, r, dyn, ns, "keyed", "STAKATER_KEYS_CONFIGMAP", 3)
}

// A GitOps tool re-applying a declared workload's manifest from Git
// (server-side, its own field manager, forcing conflicts) neither reverts
// the reload nor rolls the workload: the reload variable is the
// controller's field, in a container list keyed by name.
func TestDeclaredKindGitOpsReapplyNeitherRevertsNorRolls(t *testing.T) {
	requireControlPlane(t)
	ns := cp.Namespace(t)
	cs := cp.AdminClient(t)
	dyn := cloneSetKind().install(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("git-config", map[string]string{"k": "1"}))
	manifest := cloneSetKind().Object(t, "synced", auto(), usesConfigMap("synced", "git-config"))
	apply := func() {
		t.Helper()
		_, err := dyn.Resource(cloneSetKind().GVR()).Namespace(ns).Apply(context.Background(), "synced", manifest.DeepCopy(),
			metav1.ApplyOptions{FieldManager: "argocd-controller", Force: true})
		if err != nil {
			t.Fatalf("applying the CloneSet as argocd-controller: %v", err)
		}
	}
	apply()
	r := startReloader(t, "", "--namespaces="+ns, cloneSetKind().Flag())
	r.waitIdle(t, 1)
	updateConfigMapData(t, cs, ns, "git-config", map[string]string{"k": "2"})
	cloneSetKind().rolledOnce(t, r, dyn, ns, "synced", "STAKATER_GIT_CONFIG_CONFIGMAP", 2)
	_, value, record := cloneSetKind().State(t, dyn, ns, "synced", "STAKATER_GIT_CONFIG_CONFIGMAP")
	apply()
	time.Sleep(time.Second)
	r.waitIdle(t, 2)
	if gen, v, rec := cloneSetKind().State(t, dyn, ns, "synced", "STAKATER_GIT_CONFIG_CONFIGMAP"); gen != 2 || v != value || rec != record {
		t.Fatalf("re-applying from Git reverted or rolled the CloneSet: generation %d (want 2), variable %q (was %q), record %q (was %q)", gen, v, value, rec, record)
	}
}

// A declared kind whose CRD is not installed yet is reported as an
// unavailable API; the controller runs, and reloads the kind's workloads
// once the CRD is served, without a restart.
func TestDeclaredKindIsPickedUpOnceServed(t *testing.T) {
	requireControlPlane(t)
	ns := cp.Namespace(t)
	cs := cp.AdminClient(t)
	late := declaredCRD{reloadertest.DeclaredKind{Group: "late.e2e.reloader.dev", Version: "v1", Kind: "LateSet", Plural: "latesets", Path: []string{"spec", "template"}}}
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("late", map[string]string{"k": "1"}))
	r := startReloader(t, "", "--namespaces="+ns, late.Flag(), "--api-discovery-interval=200ms")
	api := `reloader_optional_api_available{api="workload-kind:late.e2e.reloader.dev/v1/latesets"}`
	if got := r.metric(t, api); got != 0 || !strings.Contains(r.scrape(t), api) {
		t.Fatalf("%s = %v, want 0 and reported", api, got)
	}
	dyn := late.install(t)
	late.Create(t, dyn, ns, late.Object(t, "app", auto(), usesConfigMap("app", "late")))
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		return r.metric(t, api) == 1, api + " not 1 yet"
	})
	r.waitIdle(t, 1)
	updateConfigMapData(t, cs, ns, "late", map[string]string{"k": "2"})
	late.rolledOnce(t, r, dyn, ns, "app", "STAKATER_LATE_CONFIGMAP", 2)
}

// docBlocks are the fenced blocks of a docs/ page in lang ("sh", "yaml").
func docBlocks(t *testing.T, page, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", page))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// docObjects decodes the page's yaml blocks that are Kubernetes objects.
func docObjects(t *testing.T, page string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, y := range docBlocks(t, page, "yaml") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
			t.Fatalf("docs/%s: %v\n%s", page, err, y)
		}
		if u.GetKind() != "" {
			out = append(out, u)
		}
	}
	return out
}

// docs/workload-kinds.md as a person would use it: the controller run with
// the page's flags reloads the page's NodeSet, once, at its declared path.
func TestWorkloadKindsDocExamples(t *testing.T) {
	requireControlPlane(t)
	sh := docBlocks(t, "workload-kinds.md", "sh")
	if len(sh) != 1 || !strings.HasPrefix(sh[0], "reloader --workload-kind=") {
		t.Fatalf("docs/workload-kinds.md: want one sh block running reloader, got %q", sh)
	}
	args := strings.Fields(strings.TrimPrefix(sh[0], "reloader "))
	nodeSet := declaredCRD{reloadertest.DeclaredKind{Group: "example.com", Version: "v1", Kind: "NodeSet", Plural: "nodesets", Path: []string{"spec", "workload", "template"}}}
	if !slices.Contains(args, nodeSet.Flag()+",progress=condition:Ready") || !slices.Contains(args, cloneSetKind().Flag()) {
		t.Fatalf("docs/workload-kinds.md flags %v: not the kinds this test installs", args)
	}
	objs := docObjects(t, "workload-kinds.md")
	if len(objs) != 1 || objs[0].GetKind() != "NodeSet" {
		t.Fatalf("docs/workload-kinds.md: want the NodeSet example, got %d objects", len(objs))
	}
	cloneSetKind().install(t)
	dyn := nodeSet.install(t)
	ns := cp.Namespace(t)
	cs := cp.AdminClient(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("slurm-config", map[string]string{"slurm.conf": "1"}))
	nodeSet.Create(t, dyn, ns, objs[0])
	r := startReloader(t, "", append([]string{"--namespaces=" + ns}, args...)...)
	r.waitIdle(t, 1)
	updateConfigMapData(t, cs, ns, "slurm-config", map[string]string{"slurm.conf": "2"})
	nodeSet.rolledOnce(t, r, dyn, ns, "compute", "STAKATER_SLURM_CONFIG_CONFIGMAP", 2)
}

// setProgress writes what the kind's operator would: the generation it has
// seen and its Ready condition.
func (k declaredCRD) setProgress(t *testing.T, dyn dynamic.Interface, ns, name string, observed int64, ready bool) {
	t.Helper()
	u, err := dyn.Resource(k.GVR()).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cond := "False"
	if ready {
		cond = "True"
	}
	u.Object["status"] = map[string]any{"observedGeneration": observed, "conditions": []any{map[string]any{"type": "Ready", "status": cond}}}
	if _, err := dyn.Resource(k.GVR()).Namespace(ns).UpdateStatus(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("writing the status of %s %s/%s: %v", k.Kind, ns, name, err)
	}
}

// A declared kind that says how its progress is read is held by the
// rollout budget as a Deployment is: with one slot, a change both workloads
// use rolls one; the other waits until the first one's operator says its
// rollout is done (the declared condition, for the latest generation).
func TestDeclaredKindCountsAgainstTheRolloutBudget(t *testing.T) {
	requireControlPlane(t)
	ns := cp.Namespace(t)
	cs := cp.AdminClient(t)
	gated := declaredCRD{reloadertest.DeclaredKind{Group: "budget.e2e.reloader.dev", Version: "v1", Kind: "GatedSet", Plural: "gatedsets", Path: []string{"spec", "template"}, Status: true}}
	dyn := gated.install(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("shared", map[string]string{"k": "1"}))
	for _, name := range []string{"a", "b"} {
		gated.Create(t, dyn, ns, gated.Object(t, name, auto(), usesConfigMap(name, "shared")))
		gated.setProgress(t, dyn, ns, name, 1, true)
	}
	r := startReloader(t, "", "--namespaces="+ns, "--max-concurrent-rollouts=1", gated.Flag()+",progress=condition:Ready")
	r.waitIdle(t, 2)
	updateConfigMapData(t, cs, ns, "shared", map[string]string{"k": "2"})
	generations := func() map[string]int64 {
		out := map[string]int64{}
		for _, name := range []string{"a", "b"} {
			out[name], _, _ = gated.State(t, dyn, ns, name, "STAKATER_SHARED_CONFIGMAP")
		}
		return out
	}
	var first, second string
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		g := generations()
		switch {
		case g["a"] == 2 && g["b"] == 1:
			first, second = "a", "b"
		case g["b"] == 2 && g["a"] == 1:
			first, second = "b", "a"
		}
		return first != "", fmt.Sprintf("generations %v, want one of them at 2", g)
	})
	time.Sleep(2 * time.Second) // longer than the budget's recheck
	if g := generations(); g[second] != 1 {
		t.Fatalf("%s rolled while %s's rollout holds the one slot: generations %v", second, first, g)
	}
	gated.setProgress(t, dyn, ns, first, 2, true)
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		g := generations()
		return g[second] == 2, fmt.Sprintf("generations %v: %s not reloaded after %s's rollout finished", g, second, first)
	})
	r.waitIdle(t, 4)
	if g := generations(); g["a"] != 2 || g["b"] != 2 {
		t.Fatalf("generations %v, want each rolled once", g)
	}
}

package controller_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// declaredCRD is a custom workload kind a test installs and declares with
// --workload-kind: its pod template at path, its containers and their env
// lists keyed by name (as controller-gen writes a PodTemplateSpec's), so
// server-side apply merges them as it does a Deployment's.
type declaredCRD struct {
	group, version, kind, plural string
	path                         []string
	// status: the CRD has a status subresource, which its operator writes.
	status bool
}

// The two shapes of the acceptance: OpenKruise's CloneSet (template at
// .spec.template) and a kind whose template is elsewhere.
var (
	cloneSetKind = declaredCRD{"apps.kruise.io", "v1alpha1", "CloneSet", "clonesets", []string{"spec", "template"}, false}
	podSetKind   = declaredCRD{"e2e.reloader.dev", "v1", "PodSet", "podsets", []string{"spec", "workload", "podTemplate"}, false}
)

func (k declaredCRD) gvr() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: k.group, Version: k.version, Resource: k.plural}
}

// flag is the kind's --workload-kind.
func (k declaredCRD) flag() string {
	f := "--workload-kind=" + k.group + "/" + k.version + "/" + k.plural + ",kind=" + k.kind
	if strings.Join(k.path, ".") != "spec.template" {
		f += ",template=." + strings.Join(k.path, ".")
	}
	return f
}

func (k declaredCRD) crd() *unstructured.Unstructured {
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
	for i := len(k.path) - 1; i >= 0; i-- {
		node = map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": map[string]any{k.path[i]: node}}
	}
	version := map[string]any{"name": k.version, "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": node}}
	if k.status {
		version["subresources"] = map[string]any{"status": map[string]any{}}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": k.plural + "." + k.group},
		"spec": map[string]any{
			"group": k.group, "scope": "Namespaced",
			"names":    map[string]any{"kind": k.kind, "plural": k.plural, "singular": strings.ToLower(k.kind), "listKind": k.kind + "List"},
			"versions": []any{version},
		},
	}}
}

var declaredOnce sync.Map // CRD name -> *sync.Once

// install installs the kind's CRD once per test binary and waits until it
// is served.
func (k declaredCRD) install(t *testing.T) dynamic.Interface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Admin)
	if err != nil {
		t.Fatal(err)
	}
	once, _ := declaredOnce.LoadOrStore(k.plural+"."+k.group, &sync.Once{})
	once.(*sync.Once).Do(func() {
		crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
		if _, err := dyn.Resource(crds).Create(context.Background(), k.crd(), metav1.CreateOptions{}); err != nil {
			t.Fatalf("installing CRD %s.%s: %v", k.plural, k.group, err)
		}
	})
	cs := cp.AdminClient(t)
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		l, err := cs.Discovery().ServerResourcesForGroupVersion(k.group + "/" + k.version)
		if err != nil {
			return false, err.Error()
		}
		for _, r := range l.APIResources {
			if r.Name == k.plural {
				return true, ""
			}
		}
		return false, k.plural + " not served yet"
	})
	return dyn
}

// object is a workload of the kind with tmpl at its path.
func (k declaredCRD) object(t *testing.T, name string, ann map[string]string, tmpl corev1.PodTemplateSpec) *unstructured.Unstructured {
	t.Helper()
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&tmpl)
	if err != nil {
		t.Fatal(err)
	}
	annAny := map[string]any{}
	for key, v := range ann {
		annAny[key] = v
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": k.group + "/" + k.version, "kind": k.kind,
		"metadata": map[string]any{"name": name, "annotations": annAny},
		"spec":     map[string]any{"replicas": int64(1)},
	}}
	if err := unstructured.SetNestedField(u.Object, raw, k.path...); err != nil {
		t.Fatal(err)
	}
	return u
}

func (k declaredCRD) create(t *testing.T, dyn dynamic.Interface, ns string, u *unstructured.Unstructured) {
	t.Helper()
	if _, err := dyn.Resource(k.gvr()).Namespace(ns).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s %s/%s: %v", k.kind, ns, u.GetName(), err)
	}
}

// state is what a test reads of a declared workload: its generation (which
// a spec change moves: the CRDs have no status subresource), the reload
// variable at the kind's template path, and its record.
func (k declaredCRD) state(t *testing.T, dyn dynamic.Interface, ns, name, variable string) (gen int64, value, record string) {
	t.Helper()
	u, err := dyn.Resource(k.gvr()).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(u.Object, append(append([]string{}, k.path...), "spec", "containers")...)
	for _, c := range containers {
		env, _, _ := unstructured.NestedSlice(c.(map[string]any), "env")
		for _, e := range env {
			if m := e.(map[string]any); m["name"] == variable {
				value, _ = m["value"].(string)
			}
		}
	}
	return u.GetGeneration(), value, u.GetAnnotations()["reloader.dev/applied-hashes"]
}

// rolledOnce waits for the variable at the kind's template path, then checks
// the workload's spec changed exactly once.
func (k declaredCRD) rolledOnce(t *testing.T, r *reloaderProc, dyn dynamic.Interface, ns, name, variable string, syncs int) {
	t.Helper()
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		gen, v, _ := k.state(t, dyn, ns, name, variable)
		return gen == 2 && v != "", fmt.Sprintf("%s %s/%s: generation %d, %s=%q", k.kind, ns, name, gen, variable, v)
	})
	r.waitIdle(t, syncs)
	time.Sleep(500 * time.Millisecond)
	if gen, _, _ := k.state(t, dyn, ns, name, variable); gen != 2 {
		t.Fatalf("%s %s/%s rolled more than once: generation %d", k.kind, ns, name, gen)
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
	for _, k := range []declaredCRD{cloneSetKind, podSetKind} {
		k.create(t, k.install(t), ns, k.object(t, "web", auto(), usesConfigMap("web", "cfg")))
	}
	dyn := podSetKind.install(t)
	r := startReloader(t, "", "--namespaces="+ns, cloneSetKind.flag(), podSetKind.flag())
	r.waitIdle(t, 2)
	for _, k := range []declaredCRD{cloneSetKind, podSetKind} {
		if gen, _, record := k.state(t, dyn, ns, "web", "STAKATER_CFG_CONFIGMAP"); gen != 1 || record == "" {
			t.Fatalf("%s: adopting it changed its spec or wrote no record: generation %d, record %q", k.kind, gen, record)
		}
	}
	updateConfigMapData(t, cs, ns, "cfg", map[string]string{"k": "2"})
	for _, k := range []declaredCRD{cloneSetKind, podSetKind} {
		k.rolledOnce(t, r, dyn, ns, "web", "STAKATER_CFG_CONFIGMAP", 4)
	}
	u, err := dyn.Resource(podSetKind.gvr()).Namespace(ns).Get(context.Background(), "web", metav1.GetOptions{})
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
	dyn := podSetKind.install(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("keys", map[string]string{"USED": "1", "OTHER": "1"}))
	tmpl := reloadertest.PodTemplate("keyed", corev1.Container{Name: "app", Env: []corev1.EnvVar{{Name: "USED",
		ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "keys"}, Key: "USED"}}}}})
	podSetKind.create(t, dyn, ns, podSetKind.object(t, "keyed", auto(), tmpl))
	r := startReloaderEnv(t, "", []string{"POD_NAMESPACE=" + ns}, "--namespaces="+ns, "--reload-on-used-keys-only", podSetKind.flag())
	r.waitIdle(t, 1)
	_, _, record := podSetKind.state(t, dyn, ns, "keyed", "STAKATER_KEYS_CONFIGMAP")
	updateConfigMapData(t, cs, ns, "keys", map[string]string{"USED": "1", "OTHER": "2"})
	r.waitIdle(t, 2)
	time.Sleep(500 * time.Millisecond)
	if gen, v, got := podSetKind.state(t, dyn, ns, "keyed", "STAKATER_KEYS_CONFIGMAP"); gen != 1 || v != "" || got != record {
		t.Fatalf("an unused key rolled the PodSet: generation %d, variable %q, record %q (was %q)", gen, v, got, record)
	}
	updateConfigMapData(t, cs, ns, "keys", map[string]string{"USED": "2", "OTHER": "2"})
	podSetKind.rolledOnce(t, r, dyn, ns, "keyed", "STAKATER_KEYS_CONFIGMAP", 3)
}

// A GitOps tool re-applying a declared workload's manifest from Git
// (server-side, its own field manager, forcing conflicts) neither reverts
// the reload nor rolls the workload: the reload variable is the
// controller's field, in a container list keyed by name.
func TestDeclaredKindGitOpsReapplyNeitherRevertsNorRolls(t *testing.T) {
	requireControlPlane(t)
	ns := cp.Namespace(t)
	cs := cp.AdminClient(t)
	dyn := cloneSetKind.install(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("git-config", map[string]string{"k": "1"}))
	manifest := cloneSetKind.object(t, "synced", auto(), usesConfigMap("synced", "git-config"))
	apply := func() {
		t.Helper()
		_, err := dyn.Resource(cloneSetKind.gvr()).Namespace(ns).Apply(context.Background(), "synced", manifest.DeepCopy(),
			metav1.ApplyOptions{FieldManager: "argocd-controller", Force: true})
		if err != nil {
			t.Fatalf("applying the CloneSet as argocd-controller: %v", err)
		}
	}
	apply()
	r := startReloader(t, "", "--namespaces="+ns, cloneSetKind.flag())
	r.waitIdle(t, 1)
	updateConfigMapData(t, cs, ns, "git-config", map[string]string{"k": "2"})
	cloneSetKind.rolledOnce(t, r, dyn, ns, "synced", "STAKATER_GIT_CONFIG_CONFIGMAP", 2)
	_, value, record := cloneSetKind.state(t, dyn, ns, "synced", "STAKATER_GIT_CONFIG_CONFIGMAP")
	apply()
	time.Sleep(time.Second)
	r.waitIdle(t, 2)
	if gen, v, rec := cloneSetKind.state(t, dyn, ns, "synced", "STAKATER_GIT_CONFIG_CONFIGMAP"); gen != 2 || v != value || rec != record {
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
	late := declaredCRD{"late.e2e.reloader.dev", "v1", "LateSet", "latesets", []string{"spec", "template"}, false}
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("late", map[string]string{"k": "1"}))
	r := startReloader(t, "", "--namespaces="+ns, late.flag(), "--api-discovery-interval=200ms")
	api := `reloader_optional_api_available{api="workload-kind:late.e2e.reloader.dev/v1/latesets"}`
	if got := r.metric(t, api); got != 0 || !strings.Contains(r.scrape(t), api) {
		t.Fatalf("%s = %v, want 0 and reported", api, got)
	}
	dyn := late.install(t)
	late.create(t, dyn, ns, late.object(t, "app", auto(), usesConfigMap("app", "late")))
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
	nodeSet := declaredCRD{"example.com", "v1", "NodeSet", "nodesets", []string{"spec", "workload", "template"}, false}
	if !slices.Contains(args, nodeSet.flag()+",progress=condition:Ready") || !slices.Contains(args, cloneSetKind.flag()) {
		t.Fatalf("docs/workload-kinds.md flags %v: not the kinds this test installs", args)
	}
	objs := docObjects(t, "workload-kinds.md")
	if len(objs) != 1 || objs[0].GetKind() != "NodeSet" {
		t.Fatalf("docs/workload-kinds.md: want the NodeSet example, got %d objects", len(objs))
	}
	cloneSetKind.install(t)
	dyn := nodeSet.install(t)
	ns := cp.Namespace(t)
	cs := cp.AdminClient(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("slurm-config", map[string]string{"slurm.conf": "1"}))
	nodeSet.create(t, dyn, ns, objs[0])
	r := startReloader(t, "", append([]string{"--namespaces=" + ns}, args...)...)
	r.waitIdle(t, 1)
	updateConfigMapData(t, cs, ns, "slurm-config", map[string]string{"slurm.conf": "2"})
	nodeSet.rolledOnce(t, r, dyn, ns, "compute", "STAKATER_SLURM_CONFIG_CONFIGMAP", 2)
}

// setProgress writes what the kind's operator would: the generation it has
// seen and its Ready condition.
func (k declaredCRD) setProgress(t *testing.T, dyn dynamic.Interface, ns, name string, observed int64, ready bool) {
	t.Helper()
	u, err := dyn.Resource(k.gvr()).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cond := "False"
	if ready {
		cond = "True"
	}
	u.Object["status"] = map[string]any{"observedGeneration": observed, "conditions": []any{map[string]any{"type": "Ready", "status": cond}}}
	if _, err := dyn.Resource(k.gvr()).Namespace(ns).UpdateStatus(context.Background(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("writing the status of %s %s/%s: %v", k.kind, ns, name, err)
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
	gated := declaredCRD{"budget.e2e.reloader.dev", "v1", "GatedSet", "gatedsets", []string{"spec", "template"}, true}
	dyn := gated.install(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("shared", map[string]string{"k": "1"}))
	for _, name := range []string{"a", "b"} {
		gated.create(t, dyn, ns, gated.object(t, name, auto(), usesConfigMap(name, "shared")))
		gated.setProgress(t, dyn, ns, name, 1, true)
	}
	r := startReloader(t, "", "--namespaces="+ns, "--max-concurrent-rollouts=1", gated.flag()+",progress=condition:Ready")
	r.waitIdle(t, 2)
	updateConfigMapData(t, cs, ns, "shared", map[string]string{"k": "2"})
	generations := func() map[string]int64 {
		out := map[string]int64{}
		for _, name := range []string{"a", "b"} {
			out[name], _, _ = gated.state(t, dyn, ns, name, "STAKATER_SHARED_CONFIGMAP")
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

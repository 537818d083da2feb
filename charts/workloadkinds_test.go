package charts

import (
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
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// declaredKinds are the chart values of the acceptance, for the kinds the
// controller's tests install too: OpenKruise's CloneSet and a kind whose pod
// template is elsewhere.
func declaredKinds() []any {
	var out []any
	for _, k := range []reloadertest.DeclaredKind{reloadertest.CloneSetKind(), reloadertest.PodSetKind()} {
		v := map[string]any{"group": k.Group, "version": k.Version, "resource": k.Plural, "kind": k.Kind}
		if path := strings.Join(k.Path, "."); path != "spec.template" {
			v["template"], v["progress"] = "."+path, "condition:Ready"
		}
		out = append(out, v)
	}
	return out
}

// rulesFor are the rules of the rendered Roles and ClusterRoles that name
// group, each as "resources: verbs".
func rulesFor(t *testing.T, objs []*unstructured.Unstructured, group string) []string {
	t.Helper()
	var out []string
	for _, o := range append(ofKind(objs, "ClusterRole"), ofKind(objs, "Role")...) {
		rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
		for _, r := range rules {
			m := r.(map[string]any)
			groups, _, _ := unstructured.NestedStringSlice(m, "apiGroups")
			if !slices.Contains(groups, group) && !slices.Contains(groups, "*") {
				continue
			}
			res, _, _ := unstructured.NestedStringSlice(m, "resources")
			verbs, _, _ := unstructured.NestedStringSlice(m, "verbs")
			names, _, _ := unstructured.NestedStringSlice(m, "resourceNames")
			out = append(out, fmt.Sprintf("%s %s: %s%s", o.GetKind(), strings.Join(res, ","), strings.Join(verbs, ","), strings.Join(names, ",")))
		}
	}
	return out
}

// Each listed kind gets exactly get, list, watch and patch on its own
// resource, in every Role or ClusterRole that holds the watch rules, and
// nothing broader; the controller is run with one --workload-kind each.
func TestChartGrantsEachDeclaredKindExactlyTheFourVerbs(t *testing.T) {
	for _, chart := range []string{Reloader, ReloaderUBI} {
		for _, global := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/watchGlobally=%v", chart, global), func(t *testing.T) {
				set := map[string]any{"reloader.watchGlobally": global, "reloader.workloadKinds": declaredKinds()}
				if !global {
					set["reloader.namespaces"] = []any{"apps"}
				}
				rel := Release{Name: "reloader", Namespace: "infra", Values: values(set)}
				objs := render(t, chart, rel)
				want := map[string]string{"apps.kruise.io": "clonesets", "e2e.reloader.dev": "podsets"}
				for group, resource := range want {
					got := rulesFor(t, objs, group)
					copies := 1 // one ClusterRole
					if !global {
						copies = 2 // one Role in each watched namespace: infra and apps
					}
					if len(got) != copies {
						t.Fatalf("%s: %d rules name the group, want %d: %v", group, len(got), copies, got)
					}
					for _, g := range got {
						if !strings.HasSuffix(g, " "+resource+": get,list,watch,patch") {
							t.Errorf("%s: rule %q, want exactly get,list,watch,patch on %s", group, g, resource)
						}
					}
				}
				args := deployment(t, objs).Spec.Template.Spec.Containers[0].Args
				for _, a := range []string{"--workload-kind=apps.kruise.io/v1alpha1/clonesets,kind=CloneSet",
					"--workload-kind=e2e.reloader.dev/v1/podsets,kind=PodSet,template=.spec.workload.podTemplate,progress=condition:Ready"} {
					if !slices.Contains(args, a) {
						t.Errorf("the controller's arguments %v lack %s", args, a)
					}
				}
			})
		}
	}
	rel := Release{Name: "reloader", Namespace: "infra", Values: values(map[string]any{
		"reloader.workloadKinds": []any{map[string]any{"group": "apps.kruise.io", "version": "v1alpha1", "resource": "clonesets"}}})}
	if _, err := RenderObjects(Reloader, rel); err == nil {
		t.Error("a workload kind without kind rendered: the values schema must refuse it")
	}
}

// The controller run with what the chart renders for a listed CloneSet
// kind, authenticated as the chart's ServiceAccount (not cluster-admin),
// watches and reloads a CloneSet.
func TestControllerReloadsADeclaredKindUnderTheChartsRBAC(t *testing.T) {
	needControlPlane(t)
	ctx := testContext(t)
	admin := cp.AdminClient(t)
	kind := reloadertest.CloneSetKind()
	dyn := kind.Install(t, cp.Admin)
	release, watched := cp.Namespace(t), cp.Namespace(t)
	rel := Release{Name: "reloader", Namespace: release, KubeVersion: mustVersion(t), Values: values(map[string]any{
		"reloader.watchGlobally": false, "reloader.namespaces": []any{watched}, "reloader.workloadKinds": declaredKinds()[:1]})}
	if _, err := admin.CoreV1().ConfigMaps(watched).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"k": "1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "web", Image: "registry.invalid/web:1", EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}}}}}
	kind.Create(t, dyn, watched, kind.Object(t, "web", map[string]string{"reloader.stakater.com/auto": "true"}, tmpl))
	startUnderChartRBAC(t, rel)
	read := func() (*unstructured.Unstructured, string) {
		u, err := dyn.Resource(kind.GVR()).Namespace(watched).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return u, kind.Env(u, "STAKATER_APP_CONFIGMAP")
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		u, _ := read()
		_, ok := u.GetAnnotations()["reloader.dev/applied-hashes"]
		return ok, "the controller has not adopted CloneSet web"
	})
	if _, err := admin.CoreV1().ConfigMaps(watched).Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"k": "2"}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		u, v := read()
		return v != "" && u.GetGeneration() == 2, fmt.Sprintf("CloneSet web: generation %d, STAKATER_APP_CONFIGMAP %q", u.GetGeneration(), v)
	})
}

// The chart values docs/workload-kinds.md shows render the flags the page
// shows and exactly the four verbs on each listed resource.
func TestChartRendersTheWorkloadKindsOfTheDocs(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(Dir(), "..", "docs", "workload-kinds.md"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	for _, m := range regexp.MustCompile("(?s)```yaml\n(reloader:.*?)```").FindAllStringSubmatch(string(page), -1) {
		if err := yaml.Unmarshal([]byte(m[1]), &doc); err != nil {
			t.Fatal(err)
		}
	}
	sh := regexp.MustCompile("(?s)```sh\nreloader (.*?)\n```").FindStringSubmatch(string(page))
	if doc == nil || sh == nil {
		t.Fatal("docs/workload-kinds.md has no chart values block or no reloader command")
	}
	objs := render(t, Reloader, Release{Name: "reloader", Namespace: "infra", Values: doc})
	args := deployment(t, objs).Spec.Template.Spec.Containers[0].Args
	for _, flag := range strings.Fields(sh[1]) {
		if !slices.Contains(args, flag) {
			t.Errorf("the docs' values render %v, without the docs' %s", args, flag)
		}
	}
	for group, resource := range map[string]string{"apps.kruise.io": "clonesets", "example.com": "nodesets"} {
		if got := rulesFor(t, objs, group); len(got) != 1 || got[0] != "ClusterRole "+resource+": get,list,watch,patch" {
			t.Errorf("%s: rules %v, want exactly get,list,watch,patch on %s", group, got, resource)
		}
	}
}

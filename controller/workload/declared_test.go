package workload

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestParseDeclaredReadsGVRKindTemplatePathAndProgress(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Declared
	}{
		{"apps.kruise.io/v1alpha1/clonesets,kind=CloneSet", Declared{Kind: "CloneSet",
			GVR: schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "clonesets"}, TemplatePath: []string{"spec", "template"}}},
		{"example.com/v1/podsets,kind=PodSet,template=.spec.workload.podTemplate,progress=condition:Ready", Declared{Kind: "PodSet",
			GVR:          schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "podsets"},
			TemplatePath: []string{"spec", "workload", "podTemplate"}, ProgressCondition: "Ready"}},
		{"example.com/v1beta2/nodesets,progress=none,kind=NodeSet", Declared{Kind: "NodeSet",
			GVR: schema.GroupVersionResource{Group: "example.com", Version: "v1beta2", Resource: "nodesets"}, TemplatePath: []string{"spec", "template"}}},
	} {
		got, err := ParseDeclared(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if got.Kind != tc.want.Kind || got.GVR != tc.want.GVR || !slices.Equal(got.TemplatePath, tc.want.TemplatePath) || got.ProgressCondition != tc.want.ProgressCondition {
			t.Errorf("%s: got %+v, want %+v", tc.in, got, tc.want)
		}
		again, err := ParseDeclared(got.String())
		if err != nil || again.String() != got.String() {
			t.Errorf("%s: String() %q does not read back (%v)", tc.in, got.String(), err)
		}
	}
}

func TestParseDeclaredRefusesWhatItCannotReload(t *testing.T) {
	for in, why := range map[string]string{
		"clonesets":                                                         "GROUP/VERSION/RESOURCE",
		"apps.kruise.io/v1alpha1/clonesets":                                 "kind=KIND is missing",
		"apps/v1/deployments,kind=Foo":                                      "custom resources only",
		"apps.kruise.io/v1alpha1/clonesets,kind=Deployment":                 "built in",
		"apps.kruise.io/v1alpha1/clonesets,kind=cloneSet":                   "Kind name",
		"apps.kruise.io/1/clonesets,kind=CloneSet":                          "API version",
		"apps.kruise.io/v1/CloneSets,kind=CloneSet":                         "lower-case plural",
		"example.com/v1/podsets,kind=PodSet,template=.metadata.annotations": "under .spec",
		"example.com/v1/podsets,kind=PodSet,template=.spec..x":              "not a field name",
		"example.com/v1/podsets,kind=PodSet,progress=Ready":                 "none or condition:TYPE",
		"example.com/v1/podsets,kind=PodSet,kind=Other":                     "KEY=VALUE",
		"example.com/v1/podsets,kind=PodSet,replicas=.spec.replicas":        "unknown key",
	} {
		if _, err := ParseDeclared(in); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: error %v, want one saying %q", in, err, why)
		}
	}
}

func FuzzParseDeclared(f *testing.F) {
	for _, s := range []string{"apps.kruise.io/v1alpha1/clonesets,kind=CloneSet", "example.com/v1/podsets,kind=PodSet,template=.spec.a.b,progress=condition:Ready", ",,,", "a/b/c,kind=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDeclared(s)
		if err != nil {
			return
		}
		if d.Kind == "" || len(d.TemplatePath) < 2 || d.TemplatePath[0] != "spec" {
			t.Fatalf("%q accepted as %+v", s, d)
		}
		if again, err := ParseDeclared(d.String()); err != nil || again.String() != d.String() {
			t.Fatalf("%q: %q does not read back: %v", s, d.String(), err)
		}
	})
}

func mustDeclare(t *testing.T, specs ...string) Table {
	t.Helper()
	var ds []Declared
	for _, s := range specs {
		d, err := ParseDeclared(s)
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	tab, err := NewTable(ds)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestTableRefusesAKindOrResourceDeclaredTwice(t *testing.T) {
	a, _ := ParseDeclared("apps.kruise.io/v1alpha1/clonesets,kind=CloneSet")
	b, _ := ParseDeclared("example.com/v1/clonesets,kind=CloneSet")
	c, _ := ParseDeclared("apps.kruise.io/v1alpha1/clonesets,kind=Other")
	for _, pair := range [][]Declared{{a, b}, {a, c}} {
		if _, err := NewTable(pair); err == nil {
			t.Errorf("%v accepted", pair)
		}
	}
	r, _ := ParseDeclared("argoproj.io/v1alpha1/rollouts,kind=MyRollout")
	if _, err := NewTable([]Declared{r}); err == nil {
		t.Error("declaring Argo Rollouts' resource again was accepted")
	}
}

func TestTableKnowsDeclaredKindsBesideTheBuiltInOnes(t *testing.T) {
	tab := mustDeclare(t, "apps.kruise.io/v1alpha1/clonesets,kind=CloneSet")
	for _, alias := range []string{"CloneSet", "clonesets", "cloneset"} {
		if k, ok := tab.ByAlias(alias); !ok || k != "CloneSet" {
			t.Errorf("ByAlias(%q) = %q, %v", alias, k, ok)
		}
	}
	if k, ok := tab.ByAlias("deploy"); !ok || k != Deployment {
		t.Errorf("the built-in aliases are gone: %q %v", k, ok)
	}
	if gvr, ok := tab.GVR("CloneSet"); !ok || gvr.Resource != "clonesets" {
		t.Errorf("GVR(CloneSet) = %v %v", gvr, ok)
	}
	if gvr, ok := tab.GVR(Rollout); !ok || gvr.Group != "argoproj.io" {
		t.Errorf("GVR(Rollout) = %v %v", gvr, ok)
	}
	if _, ok := tab.GVR(Deployment); ok {
		t.Error("a Deployment is no custom resource")
	}
	if !slices.Contains(tab.All(), "CloneSet") || !slices.Contains(tab.All(), Job) {
		t.Errorf("All() = %v", tab.All())
	}
	if CloneSet := Kind("CloneSet"); CloneSet.Has(CustomResource) || CloneSet.Has(Pausable) {
		t.Error("a declared kind claims a built-in kind's capabilities")
	}
}

// A declared kind's objects are read at its template path, and viewed like
// any workload: their kind comes from the object.
func TestTransformReadsTheTemplateAtTheDeclaredPath(t *testing.T) {
	tab := mustDeclare(t, "example.com/v1/podsets,kind=PodSet,template=.spec.workload.podTemplate")
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "PodSet",
		"metadata": map[string]any{"name": "web", "namespace": "apps"},
		"spec": map[string]any{"workload": map[string]any{"podTemplate": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": "x", "futureField": true}}}}}}}}
	obj, err := tab.Transform("PodSet")(u)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ViewOf(obj)
	if err != nil {
		t.Fatal(err)
	}
	if v.Kind != "PodSet" || v.Key().String() != "PodSet apps/web" || len(v.Template.Spec.Containers) != 1 || v.Template.Spec.Containers[0].Name != "app" {
		t.Fatalf("view %+v", v)
	}
	if raw := obj.(*Custom).Containers; len(raw) != 1 || raw[0].(map[string]any)["futureField"] != true {
		t.Fatalf("the raw containers lost what this build does not know: %v", raw)
	}
}

// A Rollout with a workloadRef is viewed with the referenced Deployment's
// template once the cache can give it, and with its own (empty) until then.
func TestRolloutWithWorkloadRefShowsTheReferencedTemplate(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"name": "web", "namespace": "apps"},
		"spec":     map[string]any{"workloadRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web-deploy"}}}}
	obj, err := CustomFromUnstructured(u)
	if err != nil {
		t.Fatal(err)
	}
	c := obj.(*Custom)
	if c.WorkloadRef != "web-deploy" {
		t.Fatalf("WorkloadRef %q", c.WorkloadRef)
	}
	v, _ := ViewOf(c)
	if len(v.Template.Spec.Containers) != 0 {
		t.Fatal("a template out of nowhere")
	}
	referenced := &corev1.PodTemplateSpec{}
	referenced.Labels = map[string]string{"from": "deployment"}
	c.Referenced = func() *corev1.PodTemplateSpec { return referenced }
	v, _ = ViewOf(c.DeepCopyObject())
	if v.Template.Labels["from"] != "deployment" || v.Kind != Rollout {
		t.Fatalf("view %+v does not show the Deployment's template", v)
	}
}

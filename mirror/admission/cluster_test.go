package admission_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/charts"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/admission"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
	"github.com/reloader-dev/reloader/test/controlplane"
)

var cp *controlplane.ControlPlane

// policyFor verifies rel's lock and fills the policy options for it at tgt,
// as reloader-mirror policy does.
func policyFor(t *testing.T, v *trust.Verifier, rel *releasetest.Release, tgt string) (*release.Lock, *mirror.Mapping, admission.Options) {
	t.Helper()
	l, _, err := v.Lock(rel.LockJSON, rel.LockBundle)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mirror.NewMapping(tgt, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	var o admission.Options
	if err := o.FromLock(l, m.Repository); err != nil {
		t.Fatal(err)
	}
	return l, m, o
}

// In -short mode only the tests that need no apiserver run.
func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(controlplane.RunTests(m, controlplane.Options{}, &cp))
}

func needControlPlane(t *testing.T) {
	t.Helper()
	if cp == nil {
		t.Skip("needs the real control plane; not started in -short mode")
	}
	cp.LogsOnFailure(t)
}

const target = "harbor.corp.example/platform/reloader"

// mirrored is a published test release as reloader-mirror sees it at target:
// its verified lock and the mapping the commands use.
type mirrored struct {
	signer  releasetest.Signer
	rel     *releasetest.Release
	mapping *mirror.Mapping
	values  *mirror.Values
	opts    admission.Options
}

func publish(t *testing.T, signer releasetest.Signer, policy trust.Policy) *mirrored {
	t.Helper()
	reg := startRegistry(t)
	rel, err := releasetest.Publish(context.Background(), releasetest.Options{Registry: reg.Host, Signer: signer, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	v, err := trust.NewVerifier(policy)
	if err != nil {
		t.Fatal(err)
	}
	l, m, o := policyFor(t, v, rel, target)
	vals, err := mirror.RenderValues(l, m)
	if err != nil {
		t.Fatal(err)
	}
	return &mirrored{signer: signer, rel: rel, mapping: m, values: vals, opts: o}
}

func publishKeyed(t *testing.T) *mirrored {
	t.Helper()
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := trust.LoadPolicy(trust.PolicyFiles{KeyFile: writeFile(t, "cosign.pub", s.PublicKeyPEM())})
	if err != nil {
		t.Fatal(err)
	}
	m := publish(t, s, p)
	m.opts.Trust = admission.Trust{PublicKeyPEM: string(s.PublicKeyPEM())}
	return m
}

func writeFile(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := t.TempDir() + "/" + name
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// kube reaches any kind, built-in or custom, through the dynamic client.
type kube struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newKube(t *testing.T, cfg *rest.Config) *kube {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &kube{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

func (k *kube) resource(o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := o.GroupVersionKind()
	m, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s %s: the apiserver does not serve this kind: %w", gvk, o.GetName(), err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return k.dyn.Resource(m.Resource).Namespace(o.GetNamespace()), nil
	}
	return k.dyn.Resource(m.Resource), nil
}

// apply is `kubectl apply --server-side`; dryRun adds --dry-run=server.
func (k *kube) apply(ctx context.Context, o *unstructured.Unstructured, dryRun bool) error {
	ri, err := k.resource(o)
	if err != nil {
		return err
	}
	data, err := json.Marshal(o.Object)
	if err != nil {
		return err
	}
	force := true
	// Strict: an unknown or misspelt field is an error, not a warning, so
	// a policy the project's schema does not know cannot pass.
	opts := metav1.PatchOptions{FieldManager: "reloader-mirror-policy-test", Force: &force, FieldValidation: "Strict"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, opts)
	return err
}

func (k *kube) delete(o *unstructured.Unstructured) {
	ri, err := k.resource(o)
	if err == nil {
		_ = ri.Delete(context.Background(), o.GetName(), metav1.DeleteOptions{})
	}
}

// decode splits a YAML stream (comments and all) into objects.
func decode(t *testing.T, b []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := charts.Objects(string(b))
	if err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return objs
}

// testContext bounds a test's calls by the test's own life and a generous
// ceiling, not by a tight wall-clock budget: a test that publishes two releases
// under -race on a loaded 2-core runner took 136 s, and a budget of 2 minutes
// failed it while nothing was wrong. The ceiling is there so that a real hang
// fails with the step that hung named, well before go test's own timeout.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func pod(ns, name string, containers, initContainers map[string]string) *unstructured.Unstructured {
	list := func(m map[string]string) []any {
		var out []any
		for n, img := range m {
			out = append(out, map[string]any{"name": n, "image": img})
		}
		return out
	}
	spec := map[string]any{"containers": list(containers)}
	if len(initContainers) > 0 {
		spec["initContainers"] = list(initContainers)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

// The ValidatingAdmissionPolicy, applied to a real apiserver, admits the chart
// installed with the values reloader-mirror values prints, for every variant
// (a -fips one with the chart of the variant it is built from), and rejects a
// tag-only image and an image from another registry with a message naming
// the container and image.
func TestValidatingAdmissionPolicyOnTheAPIServer(t *testing.T) {
	t.Parallel()
	needControlPlane(t)
	ctx := testContext(t)
	m := publishKeyed(t)
	ns := cp.Namespace(t)
	other := cp.Namespace(t)
	k := newKube(t, cp.Admin)

	o := m.opts
	o.Namespace, o.Name = ns, "rm-"+ns
	out, err := admission.Generate(o, []admission.Format{admission.VAP})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range decode(t, out[admission.VAP]) {
		if err := k.apply(ctx, obj, false); err != nil {
			t.Fatalf("applying %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		t.Cleanup(func() { k.delete(obj) })
	}

	digest := m.rel.Indexes["reloader"]
	tagOnly := target + "/reloader:v1.2.3"
	// The apiserver starts enforcing a new policy when its informer has
	// seen it; wait until a tag-only pod is refused.
	probe := pod(ns, "probe", map[string]string{"probe": tagOnly}, nil)
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		last = k.apply(ctx, probe, true)
		return last != nil && strings.Contains(last.Error(), "not pinned by digest"), nil
	}); err != nil {
		t.Fatalf("the policy never took effect; last answer: %v", last)
	}

	for _, variant := range []struct{ chart, values string }{{charts.Reloader, "standard"}, {charts.ReloaderUBI, "ubi"},
		{charts.Reloader, "fips"}, {charts.ReloaderUBI, "ubi-fips"}} {
		t.Run("chart "+variant.chart+" with reloader-mirror's "+variant.values+" values is admitted", func(t *testing.T) {
			var vals map[string]any
			if err := yaml.Unmarshal([]byte(m.values.YAML[variant.values]), &vals); err != nil {
				t.Fatal(err)
			}
			c, err := charts.Load(variant.chart)
			if err != nil {
				t.Fatal(err)
			}
			manifest, err := charts.Render(c, charts.Release{Name: variant.chart, Namespace: ns, Values: vals})
			if err != nil {
				t.Fatal(err)
			}
			objs, err := charts.Objects(manifest)
			if err != nil {
				t.Fatal(err)
			}
			var deployment *unstructured.Unstructured
			for _, obj := range objs {
				if obj.GetNamespace() == "" && isNamespaced(obj.GetKind()) {
					obj.SetNamespace(ns)
				}
				if err := k.apply(ctx, obj, false); err != nil {
					t.Fatalf("installing %s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
				if obj.GetKind() == "Deployment" {
					deployment = obj
				} else if obj.GetNamespace() == "" {
					t.Cleanup(func() { k.delete(obj) })
				}
			}
			if deployment == nil {
				t.Fatal("the chart rendered no Deployment")
			}
			containers, _, _ := unstructured.NestedSlice(deployment.Object, "spec", "template", "spec", "containers")
			c0 := containers[0].(map[string]any)
			if img := c0["image"].(string); !strings.HasPrefix(img, target+"/") || !strings.Contains(img, "@sha256:") {
				t.Fatalf("the chart rendered image %s, not pinned at the target", img)
			}

			// The same Deployment by tag, then from the upstream registry.
			repo := c0["image"].(string)[:strings.Index(c0["image"].(string), "@")]
			for _, bad := range []struct{ image, want string }{
				{repo + ":v1.2.3", "not pinned by digest: container " + c0["name"].(string) + " image " + repo + ":v1.2.3"},
				{"ghcr.io/reloader-dev/" + variant.chart + "@" + digest, "not from the mirrored repositories: container " + c0["name"].(string) + " image ghcr.io/reloader-dev/" + variant.chart + "@" + digest},
			} {
				d := deployment.DeepCopy()
				c0 := containers[0].(map[string]any)
				c0 = deepCopyMap(c0)
				c0["image"] = bad.image
				if err := unstructured.SetNestedSlice(d.Object, append([]any{c0}, containers[1:]...), "spec", "template", "spec", "containers"); err != nil {
					t.Fatal(err)
				}
				err := k.apply(ctx, d, false)
				if err == nil || !strings.Contains(err.Error(), bad.want) {
					t.Errorf("Deployment with image %s: got %v, want a denial containing %q", bad.image, err, bad.want)
				}
			}
		})
	}

	for _, tc := range []struct {
		name string
		obj  *unstructured.Unstructured
		want string // empty: admitted
	}{
		{"pinned pod from the mirror", pod(ns, "ok", map[string]string{"app": target + "/reloader@" + digest}, nil), ""},
		{"pinned pod with a tag and digest", pod(ns, "ok2", map[string]string{"app": target + "/reloader-ubi:v1.2.3@" + digest}, nil), ""},
		{"tag-only pod", pod(ns, "tag", map[string]string{"app": tagOnly}, nil), "not pinned by digest: container app image " + tagOnly},
		{"init container by tag", pod(ns, "init", map[string]string{"app": target + "/reloader@" + digest}, map[string]string{"setup": "busybox:1.36"}),
			"not pinned by digest: container setup image busybox:1.36"},
		{"another registry", pod(ns, "ghcr", map[string]string{"app": "ghcr.io/reloader-dev/reloader@" + digest}, nil),
			"not from the mirrored repositories: container app image ghcr.io/reloader-dev/reloader@" + digest},
		{"a sibling repository at the target", pod(ns, "sibling", map[string]string{"app": target + "/reloader-evil@" + digest}, nil),
			"not from the mirrored repositories: container app image " + target + "/reloader-evil@" + digest},
		{"cronjob by tag", cronJob(ns, tagOnly), "not pinned by digest: container job image " + tagOnly},
		{"outside the namespace", pod(other, "free", map[string]string{"app": "busybox"}, nil), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := k.apply(ctx, tc.obj, true)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("denied: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want a denial containing %q", err, tc.want)
			}
		})
	}
}

func deepCopyMap(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}

func isNamespaced(kind string) bool {
	switch kind {
	case "ClusterRole", "ClusterRoleBinding", "Namespace", "CustomResourceDefinition":
		return false
	}
	return true
}

func cronJob(ns, image string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "batch/v1", "kind": "CronJob",
		"metadata": map[string]any{"name": "nightly", "namespace": ns},
		"spec": map[string]any{"schedule": "@daily", "jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"restartPolicy": "Never", "containers": []any{map[string]any{"name": "job", "image": image}},
		}}}}},
	}}
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

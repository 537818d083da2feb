package admission_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/reloader-dev/reloader/mirror/admission"
	"github.com/reloader-dev/reloader/release"
)

// applied is kube.apply that returns the object as the apiserver stored it
// (or would have, with dryRun).
func (k *kube) applied(ctx context.Context, o *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	ri, err := k.resource(o)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(o.Object)
	if err != nil {
		return nil, err
	}
	force := true
	opts := metav1.PatchOptions{FieldManager: "reloader-mirror-policy-test", Force: &force, FieldValidation: "Strict"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, opts)
}

// workload is a pod-template object of kind holding spec.
func workload(apiVersion, kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	labels := map[string]any{"app": name}
	tmpl := map[string]any{"metadata": map[string]any{"labels": labels}, "spec": spec}
	var s map[string]any
	switch kind {
	case "Pod":
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}}
	case "Job":
		spec["restartPolicy"] = "Never"
		s = map[string]any{"template": tmpl}
	case "CronJob":
		spec["restartPolicy"] = "Never"
		s = map[string]any{"schedule": "@daily", "jobTemplate": map[string]any{"spec": map[string]any{"template": tmpl}}}
	default:
		s = map[string]any{"selector": map[string]any{"matchLabels": labels}, "template": tmpl}
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": s}}
}

// podSpecOf is the pod spec inside any workload kind.
func podSpecOf(o *unstructured.Unstructured) map[string]any {
	path := []string{"spec", "template", "spec"}
	switch o.GetKind() {
	case "Pod":
		path = []string{"spec"}
	case "CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	}
	spec, _, _ := unstructured.NestedMap(o.Object, path...)
	return spec
}

// imagesOf maps "list/name" to the image of every container in spec.
func imagesOf(spec map[string]any) map[string]string {
	out := map[string]string{}
	for _, list := range []string{"containers", "initContainers", "ephemeralContainers"} {
		cs, _ := spec[list].([]any)
		for _, c := range cs {
			c := c.(map[string]any)
			out[list+"/"+c["name"].(string)] = c["image"].(string)
		}
	}
	return out
}

// The MutatingAdmissionPolicy and the ValidatingAdmissionPolicy
// reloader-mirror policy writes, applied together to the project's real
// kube-apiserver: every workload kind applied with the release's upstream
// image references (by tag, by digest, by both) or the mirror's tag is
// stored with the mirror's digests and admitted; an ephemeral container
// added by kubectl debug is pinned too; an unknown tag of the release's
// repository and an image of another project are left as they are, and the
// validating policy then denies them, naming the image as written.
func TestMutatingPolicyPinsTheReleaseToTheMirrorOnTheAPIServer(t *testing.T) {
	t.Parallel()
	needControlPlane(t)
	ctx := testContext(t)
	m := publishKeyed(t)
	ns := cp.Namespace(t)
	k := newKube(t, cp.Admin)

	o := m.opts
	o.Namespace, o.Name = ns, "pin-"+ns
	out, err := admission.Generate(o, []admission.Format{admission.Mutating, admission.VAP})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []admission.Format{admission.Mutating, admission.VAP} {
		for _, obj := range decode(t, out[f]) {
			if obj.GetAPIVersion() != "admissionregistration.k8s.io/v1" {
				t.Errorf("%s %s is %s, want the GA admissionregistration.k8s.io/v1", obj.GetKind(), obj.GetName(), obj.GetAPIVersion())
			}
			// The apiserver refuses a kind it does not serve, so this also
			// shows that 1.37 serves MutatingAdmissionPolicy at v1 by default.
			if err := k.apply(ctx, obj, false); err != nil {
				t.Fatalf("applying %s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
			t.Cleanup(func() { k.delete(obj) })
		}
	}

	var upstream, mirrorRepo, index, tag string
	for _, a := range m.rel.Lock.Find(release.KindImageIndex, "") {
		if a.Name == "reloader" {
			upstream, mirrorRepo, index, tag = a.Repository, m.mapping.Repository(a.Repository), a.Digest, a.Tag
		}
	}
	if tag == "" {
		tag = m.rel.Lock.Version
	}
	if upstream == "" {
		t.Fatalf("the lock lists no tagged reloader index: %+v", m.rel.Lock.Find(release.KindImageIndex, ""))
	}
	pinned := mirrorRepo + "@" + index

	// Both policies take effect once the apiserver's informers see them,
	// each on its own: wait until a pod by the upstream tag is pinned and
	// admitted (the mutating policy) and one by another image is denied
	// (the validating policy; a pinned pod is admitted without it).
	probe := pod(ns, "probe", map[string]string{"app": upstream + ":" + tag}, nil)
	unpinned := pod(ns, "probe-unpinned", map[string]string{"app": "busybox:1.36"}, nil)
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := k.applied(ctx, probe, true)
		last = err
		if err != nil || imagesOf(podSpecOf(got))["containers/app"] != pinned {
			return false, nil
		}
		_, err = k.applied(ctx, unpinned, true)
		if err == nil {
			last = errors.New("busybox:1.36 admitted: the validating policy is not in effect yet")
		}
		return err != nil && strings.Contains(err.Error(), "not pinned by digest"), nil
	}); err != nil {
		t.Fatalf("the policies never took effect; last answer: %v", last)
	}

	spec := func() map[string]any {
		return map[string]any{
			"containers": []any{
				map[string]any{"name": "by-tag", "image": upstream + ":" + tag},
				map[string]any{"name": "by-digest", "image": upstream + "@" + index},
			},
			"initContainers": []any{
				map[string]any{"name": "by-tag-and-digest", "image": upstream + ":" + tag + "@" + index},
				map[string]any{"name": "mirror-tag", "image": mirrorRepo + ":" + tag},
				map[string]any{"name": "already-pinned", "image": pinned},
			},
		}
	}
	for _, w := range []struct{ apiVersion, kind string }{
		{"v1", "Pod"}, {"apps/v1", "Deployment"}, {"apps/v1", "StatefulSet"}, {"apps/v1", "DaemonSet"},
		{"apps/v1", "ReplicaSet"}, {"batch/v1", "Job"}, {"batch/v1", "CronJob"},
	} {
		t.Run(w.kind+" with the upstream references is stored pinned to the mirror", func(t *testing.T) {
			obj := workload(w.apiVersion, w.kind, ns, "upstream-"+strings.ToLower(w.kind), spec())
			if _, err := k.applied(ctx, obj, false); err != nil {
				t.Fatalf("denied: %v", err)
			}
			ri, err := k.resource(obj)
			if err != nil {
				t.Fatal(err)
			}
			stored, err := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := imagesOf(podSpecOf(stored))
			if len(got) != 5 {
				t.Errorf("stored containers %v, want the 5 applied", got)
			}
			for c, img := range got {
				if img != pinned {
					t.Errorf("%s stored with image %s, want %s", c, img, pinned)
				}
			}
		})
	}

	t.Run("an ephemeral container added to a running pod is pinned", func(t *testing.T) {
		p := pod(ns, "debugged", map[string]string{"app": pinned}, nil)
		if _, err := k.applied(ctx, p, false); err != nil {
			t.Fatal(err)
		}
		ri, _ := k.resource(p)
		cur, err := ri.Get(ctx, "debugged", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_ = unstructured.SetNestedSlice(cur.Object, []any{map[string]any{"name": "debug", "image": upstream + ":" + tag}}, "spec", "ephemeralContainers")
		got, err := ri.Update(ctx, cur, metav1.UpdateOptions{}, "ephemeralcontainers")
		if err != nil {
			t.Fatalf("adding the ephemeral container: %v", err)
		}
		if img := imagesOf(podSpecOf(got))["ephemeralContainers/debug"]; img != pinned {
			t.Errorf("ephemeral container stored with %s, want %s", img, pinned)
		}
	})

	for _, tc := range []struct{ name, image, want string }{
		{"an unknown tag of the release repository is not guessed, and denied", upstream + ":v9.9.9",
			"not pinned by digest: container app image " + upstream + ":v9.9.9"},
		{"an unknown tag at the mirror is not guessed, and denied", mirrorRepo + ":latest",
			"not pinned by digest: container app image " + mirrorRepo + ":latest"},
		{"another project's image is left alone, and denied", "busybox:1.36",
			"not pinned by digest: container app image busybox:1.36"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := k.applied(ctx, pod(ns, "unknown", map[string]string{"app": tc.image}, nil), true)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a denial containing %q", err, tc.want)
			}
		})
	}
}

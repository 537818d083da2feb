package workload

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	// Rollout is an Argo Rollouts rollout (argoproj.io/v1alpha1).
	Rollout Kind = "Rollout"
	// DeploymentConfig is an OpenShift DeploymentConfig (apps.openshift.io/v1).
	DeploymentConfig Kind = "DeploymentConfig"
)

// Custom is what the cache keeps of a custom workload: its metadata and pod
// template, decoded once when it enters the cache, and the template's
// containers as the apiserver sent them. A reload writes those raw
// containers back, so fields this build of k8s.io/api does not know (a newer
// Kubernetes, or the custom kind's own additions) survive it.
type Custom struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Template corev1.PodTemplateSpec
	// Containers is the template's spec.containers, unstructured.
	Containers []any
	// WorkloadRef names the Deployment an Argo Rollout takes its pod
	// template from (spec.workloadRef); empty when it has its own.
	WorkloadRef string
	// Referenced, when set (the cache sets it for a WorkloadRef), reads the
	// referenced Deployment's template as cached now; nil while it is not.
	Referenced func() *corev1.PodTemplateSpec
	// Progress is where a declared kind's rollout is, read from its
	// progress condition; nil for a kind that declares none.
	Progress *Progress
}

// Progress is what the rollout budget reads of a declared kind's status.
type Progress struct {
	// ObservedGeneration is status.observedGeneration: the kind's operator
	// has seen the spec of that generation.
	ObservedGeneration int64
	// Done: the declared condition's status is "True".
	Done bool
}

// Rolling reports whether the declared kind's operator has not yet seen
// its latest spec or does not yet say its rollout is done; false for a kind
// that reports no progress.
func (c *Custom) Rolling() bool {
	return c.Progress != nil && (c.Generation > c.Progress.ObservedGeneration || !c.Progress.Done)
}

// DeepCopyObject implements runtime.Object (the event recorder needs it).
func (c *Custom) DeepCopyObject() runtime.Object {
	out := &Custom{TypeMeta: c.TypeMeta, WorkloadRef: c.WorkloadRef, Referenced: c.Referenced}
	if c.Progress != nil {
		p := *c.Progress
		out.Progress = &p
	}
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	c.Template.DeepCopyInto(&out.Template)
	if c.Containers != nil {
		out.Containers = runtime.DeepCopyJSONValue(c.Containers).([]any)
	}
	return out
}

// CustomFromUnstructured is the informer transform for the built-in custom
// workloads (Rollout, DeploymentConfig): their template is at spec.template.
func CustomFromUnstructured(obj any) (any, error) {
	return customAt(obj, defaultTemplatePath())
}

// customAt decodes a custom workload whose pod template is at path.
func customAt(obj any, path []string) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil // already transformed, or a tombstone
	}
	c := &Custom{}
	c.APIVersion, c.Kind = u.GetAPIVersion(), u.GetKind()
	if meta, ok := u.Object["metadata"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(meta, &c.ObjectMeta); err != nil {
			return nil, fmt.Errorf("decoding the metadata of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	c.ManagedFields = nil
	if tmpl, found, err := unstructured.NestedMap(u.Object, path...); err == nil && found {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &c.Template); err != nil {
			return nil, fmt.Errorf("decoding the pod template of %s %s/%s at .%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), strings.Join(path, "."), err)
		}
	}
	if containers, found, err := unstructured.NestedSlice(u.Object, append(slices.Clone(path), "spec", "containers")...); err == nil && found {
		c.Containers = containers
	}
	if Kind(c.Kind) == Rollout {
		// Argo Rollouts' workloadRef: the template is the Deployment's.
		if ref, _, _ := unstructured.NestedStringMap(u.Object, "spec", "workloadRef"); ref["kind"] == "Deployment" && ref["name"] != "" {
			c.WorkloadRef = ref["name"]
		}
	}
	return c, nil
}

// customView is the View of a cached custom workload: a Rollout with a
// workloadRef shows the referenced Deployment's template, where its
// references are and where its reload is written.
func (c *Custom) view() View {
	if c.WorkloadRef != "" && c.Referenced != nil {
		if t := c.Referenced(); t != nil {
			return View{Kind: Kind(c.Kind), Object: c, Template: t}
		}
	}
	return View{Kind: Kind(c.Kind), Object: c, Template: &c.Template}
}

// Meta is what the cache keeps of objects read only for their metadata
// (SecretProviderClasses: their ignore/match annotations).
type Meta struct {
	metav1.TypeMeta
	metav1.ObjectMeta
}

// DeepCopyObject implements runtime.Object.
func (m *Meta) DeepCopyObject() runtime.Object {
	out := &Meta{TypeMeta: m.TypeMeta}
	m.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

// MetaFromUnstructured is the informer transform keeping metadata only.
func MetaFromUnstructured(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	m := &Meta{}
	m.APIVersion, m.Kind = u.GetAPIVersion(), u.GetKind()
	if meta, ok := u.Object["metadata"].(map[string]any); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(meta, &m.ObjectMeta); err != nil {
			return nil, fmt.Errorf("decoding the metadata of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	m.ManagedFields = nil
	return m, nil
}

// progressOf reads the rollout progress of a declared kind whose status
// carries condition (Kubernetes' condition shape: type, status).
func progressOf(u *unstructured.Unstructured, condition string) *Progress {
	p := &Progress{}
	p.ObservedGeneration, _, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	conditions, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == condition {
			p.Done = m["status"] == "True"
		}
	}
	return p
}

package workload

import (
	"fmt"

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
	// Containers is spec.template.spec.containers, unstructured.
	Containers []any
}

// DeepCopyObject implements runtime.Object (the event recorder needs it).
func (c *Custom) DeepCopyObject() runtime.Object {
	out := &Custom{TypeMeta: c.TypeMeta}
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	c.Template.DeepCopyInto(&out.Template)
	if c.Containers != nil {
		out.Containers = runtime.DeepCopyJSONValue(c.Containers).([]any)
	}
	return out
}

// CustomFromUnstructured is the informer transform for custom workloads.
func CustomFromUnstructured(obj any) (any, error) {
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
	if tmpl, found, err := unstructured.NestedMap(u.Object, "spec", "template"); err == nil && found {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &c.Template); err != nil {
			return nil, fmt.Errorf("decoding the pod template of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	if containers, found, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers"); err == nil && found {
		c.Containers = containers
	}
	return c, nil
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

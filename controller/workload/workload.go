// Package workload is the controller's model of the kinds it reloads
// (Deployment, StatefulSet, DaemonSet, CronJob, Job, Rollout,
// DeploymentConfig, and the kinds a user declares: Table): one table of
// what each built-in kind is and can do, a uniform view of their pod
// templates, and the Change a reload makes. It reaches no apiserver;
// controller/rollout applies a Change to the live object.
package workload

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kind is a workload kind.
type Kind string

const (
	Deployment  Kind = "Deployment"
	StatefulSet Kind = "StatefulSet"
	DaemonSet   Kind = "DaemonSet"
	CronJob     Kind = "CronJob"
	Job         Kind = "Job"
)

// Key identifies one workload; it is what the work queue holds.
type Key struct {
	Kind      Kind
	Namespace string
	Name      string
}

func (k Key) String() string { return string(k.Kind) + " " + k.Namespace + "/" + k.Name }

// View gives uniform access to a workload object.
type View struct {
	Kind Kind
	// Object is the typed object (*appsv1.Deployment, ...). Treat as read-only:
	// it comes from the informer cache.
	Object metav1.Object
	// Template points at the object's pod template.
	Template *corev1.PodTemplateSpec
}

// Key returns the view's queue key.
func (v View) Key() Key {
	return Key{Kind: v.Kind, Namespace: v.Object.GetNamespace(), Name: v.Object.GetName()}
}

// ViewOf wraps a typed workload object.
func ViewOf(obj any) (View, error) {
	for _, s := range builtIn() {
		if v, ok := s.viewOf(obj); ok {
			return v, nil
		}
	}
	// Any other custom workload is of a declared kind (see Table): its
	// object says which.
	if o, ok := obj.(*Custom); ok {
		return o.view(), nil
	}
	return View{}, fmt.Errorf("%T is not a workload kind the controller reloads", obj)
}

// Strip drops what the controller never reads from cached workloads (status,
// managed fields), so the cache costs less memory. It is an informer
// transform and must be idempotent.
func Strip(obj any) (any, error) { return strip(obj, false) }

// StripKeepingStatus is Strip for a controller with a rollout budget, which
// reads the rollout status of Deployments, StatefulSets and DaemonSets.
func StripKeepingStatus(obj any) (any, error) { return strip(obj, true) }

func strip(obj any, keepRolloutStatus bool) (any, error) {
	for _, s := range builtIn() {
		if v, ok := s.viewOf(obj); ok {
			// A paused workload keeps its managedFields: who paused it and
			// when is what the pause watchdog reads (decide.PauseWatch).
			// Pauses are rare, so this costs little.
			if !v.Paused() {
				v.Object.SetManagedFields(nil)
			}
			if !keepRolloutStatus || (v.Kind != Deployment && v.Kind != StatefulSet && v.Kind != DaemonSet) {
				s.strip(obj)
			}
			return obj, nil
		}
	}
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// Reloadable reports whether a reload can be applied now, and why not.
func (v View) Reloadable() (bool, string) {
	if v.Object.GetDeletionTimestamp() != nil {
		return false, "being_deleted"
	}
	return true, ""
}

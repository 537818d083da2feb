// Package workload is the controller's view of the kinds it reloads
// (Deployment, StatefulSet, DaemonSet, CronJob, Job): their pod templates,
// and how a reload is applied to each.
package workload

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
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

// Kinds lists the built-in kinds, in the order the controller starts their
// informers; Rollout and DeploymentConfig are added when enabled.
func Kinds() []Kind { return []Kind{Deployment, StatefulSet, DaemonSet, CronJob, Job} }

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
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return View{Kind: Deployment, Object: o, Template: &o.Spec.Template}, nil
	case *appsv1.StatefulSet:
		return View{Kind: StatefulSet, Object: o, Template: &o.Spec.Template}, nil
	case *appsv1.DaemonSet:
		return View{Kind: DaemonSet, Object: o, Template: &o.Spec.Template}, nil
	case *batchv1.CronJob:
		return View{Kind: CronJob, Object: o, Template: &o.Spec.JobTemplate.Spec.Template}, nil
	case *batchv1.Job:
		return View{Kind: Job, Object: o, Template: &o.Spec.Template}, nil
	case *Custom:
		return View{Kind: Kind(o.Kind), Object: o, Template: &o.Template}, nil
	}
	return View{}, fmt.Errorf("%T is not a workload kind the controller reloads", obj)
}

// Strip drops what the controller never reads from cached workloads (status,
// managed fields), so the cache costs less memory. It is an informer
// transform and must be idempotent.
func Strip(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		o.Status = appsv1.DeploymentStatus{}
	case *appsv1.StatefulSet:
		o.Status = appsv1.StatefulSetStatus{}
	case *appsv1.DaemonSet:
		o.Status = appsv1.DaemonSetStatus{}
	case *batchv1.CronJob:
		o.Status = batchv1.CronJobStatus{}
	}
	// Job status is kept: a finished Job is not recreated (see Reloadable).
	return obj, nil
}

// Reloadable reports whether a reload can be applied now, and why not.
func (v View) Reloadable() (bool, string) {
	if v.Object.GetDeletionTimestamp() != nil {
		return false, "being_deleted"
	}
	return true, ""
}

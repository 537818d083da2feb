package workload

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Capability is something a kind's reload does besides (or instead of)
// changing the pod template. The decision and the controller ask the kind
// for it rather than naming kinds, so a new kind says what it can do in its
// one entry.
type Capability uint8

const (
	// Pausable kinds have spec.paused: a reload can pause the rollout for the
	// pause-period annotation, and a pause a person set is left alone.
	Pausable Capability = 1 << iota
	// RestartAt kinds have spec.restartAt, which restarts the pods without a
	// template change (Argo's "restart" strategy).
	RestartAt
	// Recreates: a reload deletes the object and creates it again, keeping
	// the replacement in a record meanwhile (see rollout.RecordOf).
	Recreates
	// CustomResource kinds are served by a custom resource definition and
	// reached through the dynamic client at their GVR.
	CustomResource
)

// kindSpec is one row of the kinds table: what the pure model knows of a
// kind. How the kind is read and written through the apiserver is the
// parallel table in controller/rollout.
type kindSpec struct {
	kind Kind
	// view wraps a typed object of this kind; false for any other object.
	view func(obj any) (View, bool)
	// strip drops what the controller never reads (status) from a cached
	// object of this kind.
	strip func(obj any)
	// aliases are the names kubectl accepts (singular, plural, short),
	// lower-cased.
	aliases []string
	caps    Capability
	// paused reads spec.paused of a Pausable kind's object.
	paused func(obj any) bool
	// gvr is where the apiserver serves a CustomResource kind.
	gvr schema.GroupVersionResource
}

// kinds holds every kind the controller reloads, built-in kinds first in the
// order the controller starts their informers.
var kinds = []kindSpec{
	{
		kind:    Deployment,
		view:    typed(Deployment, func(o *appsv1.Deployment) *corev1.PodTemplateSpec { return &o.Spec.Template }),
		strip:   func(obj any) { obj.(*appsv1.Deployment).Status = appsv1.DeploymentStatus{} },
		aliases: []string{"deployment", "deployments", "deploy"},
		caps:    Pausable,
		paused:  func(obj any) bool { return obj.(*appsv1.Deployment).Spec.Paused },
	},
	{
		kind:    StatefulSet,
		view:    typed(StatefulSet, func(o *appsv1.StatefulSet) *corev1.PodTemplateSpec { return &o.Spec.Template }),
		strip:   func(obj any) { obj.(*appsv1.StatefulSet).Status = appsv1.StatefulSetStatus{} },
		aliases: []string{"statefulset", "statefulsets", "sts"},
	},
	{
		kind:    DaemonSet,
		view:    typed(DaemonSet, func(o *appsv1.DaemonSet) *corev1.PodTemplateSpec { return &o.Spec.Template }),
		strip:   func(obj any) { obj.(*appsv1.DaemonSet).Status = appsv1.DaemonSetStatus{} },
		aliases: []string{"daemonset", "daemonsets", "ds"},
	},
	{
		kind:    CronJob,
		view:    typed(CronJob, func(o *batchv1.CronJob) *corev1.PodTemplateSpec { return &o.Spec.JobTemplate.Spec.Template }),
		strip:   func(obj any) { obj.(*batchv1.CronJob).Status = batchv1.CronJobStatus{} },
		aliases: []string{"cronjob", "cronjobs", "cj"},
	},
	{
		kind: Job,
		view: typed(Job, func(o *batchv1.Job) *corev1.PodTemplateSpec { return &o.Spec.Template }),
		// Job status is kept: a finished Job is not recreated (see
		// Reloadable).
		strip:   keepStatus,
		aliases: []string{"job", "jobs"},
		caps:    Recreates,
	},
	{
		kind:    Rollout,
		view:    customView(Rollout),
		strip:   keepStatus, // CustomFromUnstructured keeps no status
		aliases: []string{"rollout", "rollouts", "ro"},
		caps:    CustomResource | RestartAt,
		gvr:     schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"},
	},
	{
		kind:    DeploymentConfig,
		view:    customView(DeploymentConfig),
		strip:   keepStatus, // CustomFromUnstructured keeps no status
		aliases: []string{"deploymentconfig", "deploymentconfigs", "dc"},
		caps:    CustomResource,
		gvr:     schema.GroupVersionResource{Group: "apps.openshift.io", Version: "v1", Resource: "deploymentconfigs"},
	},
}

// typed is the view column of a built-in kind: objects of type T, whose pod
// template is where template says.
func typed[T metav1.Object](k Kind, template func(T) *corev1.PodTemplateSpec) func(any) (View, bool) {
	return func(obj any) (View, bool) {
		o, ok := obj.(T)
		if !ok {
			return View{}, false
		}
		return View{Kind: k, Object: o, Template: template(o)}, true
	}
}

func customView(k Kind) func(obj any) (View, bool) {
	return func(obj any) (View, bool) {
		o, ok := obj.(*Custom)
		if !ok || Kind(o.Kind) != k {
			return View{}, false
		}
		return o.view(), true
	}
}

func keepStatus(any) {}

func specOf(k Kind) (kindSpec, bool) {
	for _, s := range kinds {
		if s.kind == k {
			return s, true
		}
	}
	return kindSpec{}, false
}

// All lists every kind the controller can reload, in the table's order.
func All() []Kind {
	out := make([]Kind, 0, len(kinds))
	for _, s := range kinds {
		out = append(out, s.kind)
	}
	return out
}

// Kinds lists the built-in kinds, in the order the controller starts their
// informers; the CustomResource kinds are added when enabled.
func Kinds() []Kind {
	var out []Kind
	for _, s := range kinds {
		if s.caps&CustomResource == 0 {
			out = append(out, s.kind)
		}
	}
	return out
}

// Has reports whether k has capability c; an unknown kind has none.
func (k Kind) Has(c Capability) bool {
	s, ok := specOf(k)
	return ok && s.caps&c == c
}

// Paused reports whether the workload's rollout is paused (spec.paused);
// false for a kind that cannot pause.
func (v View) Paused() bool {
	s, ok := specOf(v.Kind)
	return ok && s.paused != nil && s.paused(v.Object)
}

// GVR is where the apiserver serves a custom workload kind; false for a
// built-in kind. The controller reaches these through the dynamic client, so
// it needs neither the Argo nor the OpenShift Go modules.
func GVR(k Kind) (schema.GroupVersionResource, bool) {
	if !k.Has(CustomResource) {
		return schema.GroupVersionResource{}, false
	}
	s, _ := specOf(k)
	return s.gvr, true
}

// ByAlias is the kind kubectl means by name (any case): "deploy",
// "statefulsets", "Job"...
func ByAlias(name string) (Kind, bool) {
	name = strings.ToLower(name)
	for _, s := range kinds {
		for _, a := range s.aliases {
			if a == name {
				return s.kind, true
			}
		}
	}
	return "", false
}

package workload

import (
	"slices"
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
	// is says whether obj is of this kind's Go type (a custom kind's is
	// *Custom, whose Kind says which).
	is func(obj any) (metav1.Object, bool)
	// template points at a typed object's pod template; nil for a custom
	// kind, whose object carries its own.
	template func(obj any) *corev1.PodTemplateSpec
	// strip drops what the controller never reads (status) from a cached
	// object of this kind.
	strip func(obj any)
	// aliases are the names kubectl accepts (singular, plural, short),
	// lower-cased, separated by spaces.
	aliases string
	caps    Capability
	// paused reads spec.paused of a Pausable kind's object.
	paused func(obj any) bool
	// gvr is where the apiserver serves a CustomResource kind.
	gvr schema.GroupVersionResource
}

// builtInKinds is the number of rows of builtIn.
const builtInKinds = 7

// builtIn is the table of every kind the controller reloads without being
// told of it, in the order the controller starts their informers (the kinds
// declared with --workload-kind are a Table, given in Options). It is built
// by each call rather than held in a package variable: nothing here is
// state, and a caller cannot change another's rows. Every column is a
// constant or a function that captures nothing, and the table is an array
// returned by value, so building it allocates nothing: it is read on every
// informer event and sync.
func builtIn() [builtInKinds]kindSpec {
	return [builtInKinds]kindSpec{
		{
			kind:     Deployment,
			is:       isA[*appsv1.Deployment],
			template: func(obj any) *corev1.PodTemplateSpec { return &obj.(*appsv1.Deployment).Spec.Template },
			strip:    func(obj any) { obj.(*appsv1.Deployment).Status = appsv1.DeploymentStatus{} },
			aliases:  "deployment deployments deploy",
			caps:     Pausable,
			paused:   func(obj any) bool { return obj.(*appsv1.Deployment).Spec.Paused },
		},
		{
			kind:     StatefulSet,
			is:       isA[*appsv1.StatefulSet],
			template: func(obj any) *corev1.PodTemplateSpec { return &obj.(*appsv1.StatefulSet).Spec.Template },
			strip:    func(obj any) { obj.(*appsv1.StatefulSet).Status = appsv1.StatefulSetStatus{} },
			aliases:  "statefulset statefulsets sts",
		},
		{
			kind:     DaemonSet,
			is:       isA[*appsv1.DaemonSet],
			template: func(obj any) *corev1.PodTemplateSpec { return &obj.(*appsv1.DaemonSet).Spec.Template },
			strip:    func(obj any) { obj.(*appsv1.DaemonSet).Status = appsv1.DaemonSetStatus{} },
			aliases:  "daemonset daemonsets ds",
		},
		{
			kind:     CronJob,
			is:       isA[*batchv1.CronJob],
			template: func(obj any) *corev1.PodTemplateSpec { return &obj.(*batchv1.CronJob).Spec.JobTemplate.Spec.Template },
			strip:    func(obj any) { obj.(*batchv1.CronJob).Status = batchv1.CronJobStatus{} },
			aliases:  "cronjob cronjobs cj",
		},
		{
			kind:     Job,
			is:       isA[*batchv1.Job],
			template: func(obj any) *corev1.PodTemplateSpec { return &obj.(*batchv1.Job).Spec.Template },
			// Job status is kept: a finished Job is not recreated (see
			// Reloadable).
			strip:   keepStatus,
			aliases: "job jobs",
			caps:    Recreates,
		},
		{
			kind:    Rollout,
			is:      isA[*Custom],
			strip:   keepStatus, // CustomFromUnstructured keeps no status
			aliases: "rollout rollouts ro",
			caps:    CustomResource | RestartAt,
			gvr:     schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"},
		},
		{
			kind:    DeploymentConfig,
			is:      isA[*Custom],
			strip:   keepStatus, // CustomFromUnstructured keeps no status
			aliases: "deploymentconfig deploymentconfigs dc",
			caps:    CustomResource,
			gvr:     schema.GroupVersionResource{Group: "apps.openshift.io", Version: "v1", Resource: "deploymentconfigs"},
		},
	}
}

// isA is the is column of a kind whose objects are T.
func isA[T metav1.Object](obj any) (metav1.Object, bool) {
	o, ok := obj.(T)
	return o, ok
}

// viewOf wraps obj if it is of this kind.
func (s kindSpec) viewOf(obj any) (View, bool) {
	o, ok := s.is(obj)
	if !ok {
		return View{}, false
	}
	if c, custom := o.(*Custom); custom {
		if Kind(c.Kind) != s.kind {
			return View{}, false
		}
		return c.view(), true
	}
	return View{Kind: s.kind, Object: o, Template: s.template(obj)}, true
}

func keepStatus(any) {}

func specOf(k Kind) (kindSpec, bool) {
	for _, s := range builtIn() {
		if s.kind == k {
			return s, true
		}
	}
	return kindSpec{}, false
}

// All lists every kind the controller can reload, in the table's order.
func All() []Kind {
	table := builtIn()
	out := make([]Kind, 0, len(table))
	for _, s := range table {
		out = append(out, s.kind)
	}
	return out
}

// Kinds lists the built-in kinds, in the order the controller starts their
// informers; the CustomResource kinds are added when enabled.
func Kinds() []Kind {
	var out []Kind
	for _, s := range builtIn() {
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
	for _, s := range builtIn() {
		if slices.Contains(strings.Fields(s.aliases), name) {
			return s.kind, true
		}
	}
	return "", false
}

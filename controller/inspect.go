package controller

import (
	"errors"
	"fmt"
	"slices"

	"github.com/reloader-dev/reloader/controller/cache"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Inspect decides for v as a sync would, from objs, writing nothing: it is
// what `reloader explain` reports, so the command and the controller cannot
// disagree about the rules. objs are the ConfigMaps and Secrets of v's
// namespace (*corev1.ConfigMap, *corev1.Secret), the SecretProviderClasses
// and SecretProviderClassPodStatuses (unstructured), and v's Namespace when
// a namespace selector is set; they are cached as the controller's watches
// would cache them (cache.FromObjects), and decided on as a sync decides.
// Inspect never saw v being created, so v is judged as the controller
// judges what its initial list holds.
func Inspect(o Options, v workload.View, objs []any) (decide.Decision, error) {
	if o.CSI && o.Dynamic == nil {
		return decide.Decision{}, ErrNoDynamic
	}
	o = o.withDefaults()
	c, err := cache.FromObjects(o.CacheOptions(), objs)
	if err != nil {
		return decide.Decision{}, fmt.Errorf("inspecting %s: %w", v.Key(), err)
	}
	return decide.Decide(o.Options, v, c.Reader(nil), o.Now()), nil
}

// ScopeGate is the setting that leaves a workload outside the controller's
// scope: it is never watched, whatever its annotations.
type ScopeGate string

const (
	InScope              ScopeGate = ""
	OutsideNamespaces    ScopeGate = "namespaces"             // --namespaces does not list its namespace
	NamespaceIgnored     ScopeGate = "namespaces-to-ignore"   // --namespaces-to-ignore lists it
	NamespaceNotSelected ScopeGate = "namespace-selector"     // --namespace-selector does not match it
	WorkloadKindIgnored  ScopeGate = "ignored-workload-types" // --ignored-workload-types lists its kind
	RolloutsOff          ScopeGate = "is-Argo-Rollouts"       // a Rollout, Argo Rollouts off
	OpenShiftOff         ScopeGate = "is-openshift"           // a DeploymentConfig, OpenShift off
)

// ScopeGate says which setting, if any, keeps v out of scope: the
// namespaces the watches cover, the decision's namespace gate, the kinds
// the caches hold.
func (o Options) ScopeGate(v workload.View, d decide.Decision) ScopeGate {
	ns := v.Object.GetNamespace()
	switch {
	case len(o.Namespaces) > 0 && !slices.Contains(o.Namespaces, ns):
		return OutsideNamespaces
	case o.NamespaceIgnored(ns):
		return NamespaceIgnored
	case d.Gate == decide.GateNamespace:
		return NamespaceNotSelected
	case o.IgnoredKinds[v.Kind]:
		return WorkloadKindIgnored
	case v.Kind == workload.Rollout && !o.ArgoRollouts:
		return RolloutsOff
	case v.Kind == workload.DeploymentConfig && !o.OpenShift:
		return OpenShiftOff
	}
	return InScope
}

// ErrNoDynamic is returned by Inspect when CSI support is on without a
// dynamic client.
var ErrNoDynamic = errors.New("inspecting with CSI support needs a dynamic client")

package controller

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/reloader-dev/reloader/controller/workload"
)

// Event reasons the controller records. Users filter on them (kubectl get
// events --field-selector reason=ReloadFail) and the original's tests match
// them, so they are part of the interface.
const (
	// ReasonReloaded: a workload was rolled for the resources named.
	ReasonReloaded = "Reloaded"
	// ReasonReloadFail: a reload failed, or a workload's configuration has a
	// problem (a bad annotation, a missing resource).
	ReasonReloadFail = "ReloadFail"
	// ReasonAPIUnavailable / ReasonAPIAvailable: an optional API asked for
	// (Argo Rollouts, CSI) is not served yet / is now served.
	ReasonAPIUnavailable = "APIUnavailable"
	ReasonAPIAvailable   = "APIAvailable"
)

// Event message formats, in the original's words where it has them.
const (
	// msgReloaded: resources, namespace, workload name, workload kind, namespace.
	msgReloaded = "Changes detected in %s in namespace '%s', Updated '%s' of type '%s' in namespace '%s'"
	// msgReloadFailed: workload kind, name, namespace, resources, error.
	msgReloadFailed = "Reload of %s '%s' in namespace '%s' for %s failed: %v"
	// msgProblems: workload kind, name, namespace, problems.
	msgProblems = "%s '%s' in namespace '%s': %s"
)

// eventObject returns the typed object for the event recorder.
func eventObject(v workload.View) runtime.Object {
	// Every kind's object, the custom ones included, is a runtime.Object.
	o, _ := v.Object.(runtime.Object)
	return o
}

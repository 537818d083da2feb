package explain

import (
	"fmt"
	"time"
)

// Object names a Kubernetes object.
type Object struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

func (o Object) String() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// Report is the explanation; its JSON form is `--output json`.
type Report struct {
	Workload Object `json:"workload"`
	Verdict  string `json:"verdict"`
	// Summary is the one-line answer.
	Summary string `json:"summary"`
	// Skip is the reason the controller's sync stops early, with the label
	// it counts in reloader_skipped_total ("namespace_not_selected",
	// "being_deleted"); empty when it goes on.
	Skip       string           `json:"skip,omitempty"`
	OptIn      OptIn            `json:"optIn"`
	Resources  []Resource       `json:"resources"`
	Problems   []string         `json:"problems,omitempty"`
	Holds      []string         `json:"holds,omitempty"`
	LastReload *LastReload      `json:"lastReload,omitempty"`
	Scope      Scope            `json:"scope"`
	Controller ControllerStatus `json:"controller"`
	Hints      []string         `json:"hints,omitempty"`
	// Unreadable names what could not be read and why (RBAC).
	Unreadable []string `json:"unreadable,omitempty"`
}

// ExitCode is the command's exit code for the verdict.
func (r *Report) ExitCode() int {
	if r.Verdict == ReloadDue || r.Verdict == Blocked {
		return ExitPending
	}
	return ExitOK
}

// Annotation is one annotation and where it sits.
type Annotation struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// On is "metadata" or "pod template".
	On string `json:"on"`
	// NotReadFor lists the kinds for which a pod template annotation is not
	// read, because the metadata carries reload annotations for them.
	NotReadFor []string `json:"notReadFor,omitempty"`
}

func (a Annotation) String() string { return fmt.Sprintf("%s=%q on the %s", a.Key, a.Value, a.On) }

// OptIn says how the workload asks to be reloaded.
type OptIn struct {
	OptedIn bool `json:"optedIn"`
	// By are the reload annotations in force.
	By []Annotation `json:"by,omitempty"`
	// AutoReloadAll is true when --auto-reload-all opts it in.
	AutoReloadAll bool `json:"autoReloadAll,omitempty"`
	// Shadowed are pod template annotations the controller does not read
	// (for some kinds) because the metadata carries reload annotations for
	// those kinds.
	Shadowed []Annotation `json:"shadowed,omitempty"`
	// Suggest is how to opt in, when not opted in.
	Suggest string `json:"suggest,omitempty"`
}

// Use is how the pod template uses a resource.
type Use struct {
	Via       string `json:"via"`
	Container string `json:"container,omitempty"`
	Init      bool   `json:"init,omitempty"`
	Volume    string `json:"volume,omitempty"`
	MountPath string `json:"mountPath,omitempty"`
	SubPath   string `json:"subPath,omitempty"`
}

// Resource is one ConfigMap, Secret or SecretProviderClass the workload uses
// or names.
type Resource struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Uses []Use  `json:"uses,omitempty"`
	// Watched is the controller's decision.
	Watched bool `json:"watched"`
	// Reason is why (a stable code) and Detail says it for people.
	Reason string `json:"reason"`
	Detail string `json:"detail"`
	Exists bool   `json:"exists"`
	// Hash is the current hash, Applied the hash last applied (empty when
	// unknown).
	Hash    string `json:"hash,omitempty"`
	Applied string `json:"applied,omitempty"`
	// Due is true when a sync would reload for it now; Change says why
	// (changed, created, deleted).
	Due    bool   `json:"due"`
	Change string `json:"change,omitempty"`
	// Keys says which keys of a watched resource count, and why.
	Keys *Keys `json:"keys,omitempty"`
}

// Keys is which keys of a resource count for reloads: all, or only those
// listed (--reload-on-used-keys-only, docs/per-key-reloads.md).
type Keys struct {
	All  bool     `json:"all"`
	Only []string `json:"only,omitempty"`
	Why  string   `json:"why"`
}

// Reasons a resource is or is not watched.
const (
	ReasonNamed              = "named"
	ReasonAuto               = "auto"
	ReasonSearch             = "search-match"
	ReasonKindIgnored        = "kind-ignored"
	ReasonLabelSelector      = "label-selector"
	ReasonUnreadable         = "unreadable"
	ReasonIgnoreAnnotation   = "ignore-annotation"
	ReasonExcluded           = "excluded"
	ReasonSearchWithoutMatch = "search-without-match"
	ReasonTypedAutoOtherKind = "typed-auto-other-kind"
	ReasonAutoFalse          = "auto-false"
	ReasonNotNamed           = "not-named"
	ReasonNotOptedIn         = "not-opted-in"
	ReasonMissing            = "missing"
)

// LastReload is what the controller left of its last reload.
type LastReload struct {
	Time     time.Time `json:"time"`
	Message  string    `json:"message"`
	Strategy string    `json:"strategy"`
}

// Scope is the controller's scope and whether the workload is inside it.
type Scope struct {
	InScope bool `json:"inScope"`
	// Unknown is true when it could not be decided (an unreadable Namespace).
	Unknown            bool     `json:"unknown,omitempty"`
	Reason             string   `json:"reason,omitempty"`
	Namespaces         []string `json:"namespaces,omitempty"`
	NamespacesToIgnore []string `json:"namespacesToIgnore,omitempty"`
	NamespaceSelector  string   `json:"namespaceSelector,omitempty"`
	ResourceSelector   string   `json:"resourceSelector,omitempty"`
	IgnoredResources   []string `json:"ignoredResources,omitempty"`
	IgnoredWorkloads   []string `json:"ignoredWorkloads,omitempty"`
}

// ControllerStatus says whether a controller runs and leads.
type ControllerStatus struct {
	OptionsFrom string `json:"optionsFrom"`
	// Running is "yes", "no" or "unknown".
	Running string   `json:"running"`
	Leader  string   `json:"leader,omitempty"`
	Details []string `json:"details,omitempty"`
}

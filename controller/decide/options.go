package decide

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/refs"
)

// Strategy is how a reload is made visible in the pod template.
type Strategy string

const (
	// EnvVars sets STAKATER_<NAME>_CONFIGMAP|SECRET on the container that uses
	// the resource (the original's default).
	EnvVars Strategy = "env-vars"
	// Annotations sets reloader.stakater.com/last-reloaded-from on the pod
	// template.
	Annotations Strategy = "annotations"
)

// Options are the controller's settings the decision depends on; see
// controller.Options for each.
type Options struct {
	Names                           annotations.Names
	Strategy                        Strategy
	AutoReloadAll                   bool
	ReloadOnCreate, ReloadOnDelete  bool
	IgnoreConfigMaps, IgnoreSecrets bool
	CSI                             bool
	// Filtered: the watches carry a label selector, so a resource missing
	// from the Reader may well exist; its absence is then not a problem.
	Filtered          bool
	MinReloadInterval time.Duration
	// UsedKeysOnly is --reload-on-used-keys-only: per-key reloads for every
	// workload that does not choose with its annotation (keys.go).
	UsedKeysOnly       bool
	NamespacesToIgnore []string
	NamespaceSelector  labels.Selector
	// ChangeWindow is --change-window: the window of every workload without
	// the change-window annotation (nil: always open).
	ChangeWindow *Window
	// Approval is --reload-approval: the approval mode of every workload
	// without the approval annotation (zero: none, reloads apply at once).
	Approval Approval
	// FieldManager is the controller's field manager (default "reloader"):
	// the pause watchdog resumes a pause it owns.
	FieldManager string
	// Hash digests the data fingerprints (--hash-algorithm; zero: SHA-1,
	// stakater's). It must be the one the cache's hashes were made with.
	Hash hash.Algorithm
}

// WithDefaults fills what the zero value leaves to the original's defaults.
func (o Options) WithDefaults() Options {
	if o.Strategy == "" {
		o.Strategy = EnvVars
	}
	if o.Hash == "" {
		o.Hash = hash.SHA1
	}
	if o.Names == (annotations.Names{}) {
		o.Names = annotations.Defaults()
	}
	if o.FieldManager == "" {
		o.FieldManager = "reloader"
	}
	return o
}

// KindIgnored reports whether o turns off watching resources of kind k
// (--resources-to-ignore, CSI integration off).
func (o Options) KindIgnored(k refs.Kind) bool {
	return (k == refs.ConfigMap && o.IgnoreConfigMaps) || (k == refs.Secret && o.IgnoreSecrets) ||
		(k == refs.SecretProviderClass && !o.CSI)
}

// NamespaceIgnored reports whether ns is listed in --namespaces-to-ignore.
func (o Options) NamespaceIgnored(ns string) bool { return slices.Contains(o.NamespacesToIgnore, ns) }

// namespaceSelected applies the namespace selector to the labels r holds.
func (o Options) namespaceSelected(r Reader, ns string) bool {
	if o.NamespaceSelector == nil {
		return true
	}
	l, ok := r.NamespaceLabels(ns)
	return ok && o.NamespaceSelector.Matches(labels.Set(l))
}

package controller

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/reloader-dev/reloader/controller/alerts"
	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/controller/budget"
	"github.com/reloader-dev/reloader/controller/cache"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Options configure the controller. Zero values are the original's defaults
// except where noted. The decision's settings are embedded: they are the
// flags the rules read (annotation names, strategy, reload-on-create,
// storm control, change window, per-key mode, namespaces ignored and
// selected), documented in decide.Options, and one value serves the
// controller, Inspect and explain.
type Options struct {
	decide.Options
	// IgnoredKinds are workload kinds never watched nor reloaded.
	IgnoredKinds map[workload.Kind]bool
	// Namespaces limits the controller to these namespaces with namespaced
	// informers (no cluster-wide permissions needed). Empty means all.
	Namespaces []string
	// ResourceSelector is a label selector applied server-side to the
	// ConfigMap and Secret watches.
	ResourceSelector string
	// Budget is the rollout budget (--max-concurrent-rollouts and its
	// per-namespace form, --rollout-deadline): a due reload of a
	// Deployment, StatefulSet or DaemonSet waits while that many rollouts
	// the controller started are going (budget.go, budget/hold.go).
	Budget budget.Options
	// ArgoRollouts and OpenShift enable the custom kinds Argo Rollouts and
	// DeploymentConfigs (CSI, in decide.Options, SecretProviderClasses).
	// They are reached through Dynamic.
	ArgoRollouts, OpenShift bool
	// Declared are the workload kinds declared with --workload-kind,
	// reached through Dynamic too.
	Declared workload.Table
	Dynamic  dynamic.Interface
	// Unavailable are the optional APIs asked for (ArgoRollouts, CSI) that
	// the apiserver does not serve yet; they are watched once it does,
	// checked every APIPollInterval (default 30s).
	Unavailable     map[cache.OptionalAPI]bool
	APIPollInterval time.Duration
	// Self is the object Events about the controller itself go on (its
	// Deployment or Pod); nil: such Events are not recorded.
	Self *corev1.ObjectReference
	// Notify, when set, is told about every reload (alert sinks). It must
	// not block.
	Notify func(alerts.Event)
	// Fence, when set, is asked before every write and every webhook; an
	// error holds the write back (the sync fails and is retried). HA sets
	// it to the lease's freshness (app's leaseFence): a replica paused past
	// its renew deadline writes nothing until it has renewed.
	Fence func() error
	// Webhook, when set, is the original's --webhook-url mode: a change is
	// sent to it instead of rolling the workload.
	Webhook *alerts.Webhook
	// Audit, when set (--audit-log), gets one line per reload, deferral,
	// skip, webhook delivery and refused write (controller/report).
	Audit *audit.Logger
	// Workers is the number of concurrent syncs (default DefaultWorkers).
	Workers int
	// AdoptionRate is how many adoption records (a workload's first
	// applied-hashes record, metadata only) are written per second at most
	// (default 50; adoption.go).
	AdoptionRate float64
	// KeyDigests makes the per-key digests, under the installation's
	// fingerprint key (controller/fingerprint); the zero value is unkeyed,
	// for a controller without one (per-key mode off and no key Secret).
	KeyDigests hash.KeyDigester
	// WatchClient, when set, serves the watches of the cluster-wide scope
	// (app.newClients: an HTTP/1.1 connection each); nil: the controller's
	// client.
	WatchClient kubernetes.Interface
	Recorder    record.EventRecorder
	Metrics     *metrics.Collectors
	Logger      *slog.Logger
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// withDefaults is o with every default filled: the one place they are set,
// for New and Inspect alike.
func (o Options) withDefaults() Options {
	o.Filtered = o.ResourceSelector != ""
	o.Options = o.Options.WithDefaults()
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.APIPollInterval <= 0 {
		o.APIPollInterval = defaultAPIPollInterval
	}
	if o.AdoptionRate <= 0 {
		o.AdoptionRate = defaultAdoptionRate
	}
	return o
}

// validate refuses settings the controller cannot run with.
func (o Options) validate() error {
	if o.Strategy != EnvVars && o.Strategy != Annotations {
		return fmt.Errorf("reload strategy %q: want %q or %q", o.Strategy, EnvVars, Annotations)
	}
	if err := o.Hash.Usable(); err != nil {
		return fmt.Errorf("controller options: %w", err)
	}
	if (o.ArgoRollouts || o.OpenShift || o.CSI || len(o.Declared.Kinds()) > 0) && o.Dynamic == nil {
		return errors.New("controller options: Argo Rollouts, OpenShift, CSI support and declared workload kinds need a dynamic client")
	}
	return nil
}

// Kinds are the workload kinds the controller watches.
func (o Options) Kinds() []workload.Kind {
	kinds := workload.Kinds()
	if o.ArgoRollouts {
		kinds = append(kinds, workload.Rollout)
	}
	if o.OpenShift {
		kinds = append(kinds, workload.DeploymentConfig)
	}
	kinds = append(kinds, o.Declared.Kinds()...)
	return slices.DeleteFunc(kinds, func(k workload.Kind) bool { return o.IgnoredKinds[k] })
}

// optionalAPIs are the APIs the controller may wait for: Argo Rollouts', the
// CSI driver's, and each declared workload kind's.
func (o Options) optionalAPIs() []cache.OptionalAPI {
	apis := []cache.OptionalAPI{cache.ArgoRolloutsAPI, cache.CSIAPI}
	for _, d := range o.Declared.Declared() {
		apis = append(apis, cache.DeclaredAPI(d))
	}
	return apis
}

// asks reports whether o asks for api: a flag for Argo Rollouts' and CSI's,
// a declared kind's always.
func (o Options) asks(api cache.OptionalAPI) bool {
	switch api {
	case cache.ArgoRolloutsAPI:
		return o.ArgoRollouts
	case cache.CSIAPI:
		return o.CSI
	}
	return true
}

// CacheOptions are the caches o needs (cache.New).
func (o Options) CacheOptions() cache.Options {
	o = o.withDefaults()
	return cache.Options{Names: o.Names, Hash: o.Hash, KeyDigests: o.KeyDigests, Namespaces: o.Namespaces,
		ResourceSelector: o.ResourceSelector, NamespaceLabels: o.NamespaceSelector != nil,
		IgnoreConfigMaps: o.IgnoreConfigMaps, IgnoreSecrets: o.IgnoreSecrets, CSI: o.CSI,
		Kinds: o.Kinds(), Table: o.Declared, Dynamic: o.Dynamic, Unavailable: o.Unavailable, KeepStatus: o.Budget.Enabled(),
		WatchClient: o.WatchClient, Logger: o.Logger}
}

// defaultAPIPollInterval is how often a missing optional API is looked for.
const defaultAPIPollInterval = 30 * time.Second

// namespaceSelected applies the namespace selector to the cached labels.
func (o *Options) namespaceSelected(c *cache.Cache, ns string) bool {
	if o.NamespaceSelector == nil {
		return true
	}
	l, ok := c.NamespaceLabels(ns)
	return ok && o.NamespaceSelector.Matches(labels.Set(l))
}

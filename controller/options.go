package controller

import (
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/reloader-dev/reloader/controller/alerts"
	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/controller/budget"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Options configure the controller. Zero values are the original's defaults
// except where noted.
type Options struct {
	Names         annotations.Names
	Strategy      Strategy
	AutoReloadAll bool
	// ReloadOnCreate reloads a workload when a resource it watches appears
	// after the workload was first seen without it.
	ReloadOnCreate bool
	// ReloadOnDelete reloads a workload when a resource it watches is deleted.
	ReloadOnDelete bool
	// IgnoreConfigMaps / IgnoreSecrets turn off watching that kind entirely.
	IgnoreConfigMaps, IgnoreSecrets bool
	// IgnoredKinds are workload kinds never watched nor reloaded.
	IgnoredKinds map[workload.Kind]bool
	// Namespaces limits the controller to these namespaces with namespaced
	// informers (no cluster-wide permissions needed). Empty means all.
	Namespaces []string
	// NamespacesToIgnore are skipped everywhere.
	NamespacesToIgnore []string
	// NamespaceSelector, when not nil, limits reloads to namespaces whose
	// labels match (needs list/watch on namespaces).
	NamespaceSelector labels.Selector
	// ResourceSelector is a label selector applied server-side to the
	// ConfigMap and Secret watches.
	ResourceSelector string
	// MinReloadInterval is the least time between two reloads of one
	// workload (0: no limit). Changes arriving sooner are coalesced into the
	// next reload, so a flapping Secret cannot create thousands of
	// ReplicaSets.
	MinReloadInterval time.Duration
	// UsedKeysOnly is --reload-on-used-keys-only: a workload that does not
	// choose with its annotation reloads only for the keys it uses
	// (decide/keys.go).
	UsedKeysOnly bool
	// Budget is the rollout budget (--max-concurrent-rollouts and its
	// per-namespace form, --rollout-deadline): a due reload of a
	// Deployment, StatefulSet or DaemonSet waits while that many rollouts
	// the controller started are going (budgetgate.go, budget/hold.go).
	Budget budget.Options
	// ChangeWindow is --change-window, the change window of workloads
	// without the change-window annotation (nil: always open).
	ChangeWindow *decide.Window
	// ArgoRollouts, OpenShift and CSI enable the custom kinds: Argo Rollouts,
	// DeploymentConfigs, and Secrets Store CSI SecretProviderClasses. They
	// are reached through Dynamic.
	ArgoRollouts, OpenShift, CSI bool
	Dynamic                      dynamic.Interface
	// Unavailable are the optional APIs asked for (ArgoRollouts, CSI) that
	// the apiserver does not serve yet; they are watched once it does,
	// checked every APIPollInterval (default 30s).
	Unavailable     map[OptionalAPI]bool
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
	// skip, webhook delivery and refused write (audittrail.go).
	Audit *audit.Logger
	// Workers is the number of concurrent syncs (default DefaultWorkers).
	Workers int
	// AdoptionRate is how many adoption records (a workload's first
	// applied-hashes record, metadata only) are written per second at most
	// (default 50; adoption.go).
	AdoptionRate float64
	// FieldManager names the controller in managedFields (default "reloader").
	FieldManager string
	// Hash digests the data fingerprints (default hash.SHA1, stakater's;
	// hash.SHA256 in FIPS 140-only mode).
	Hash hash.Algorithm
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

// Package app is the reloader command: flags (the original's names and
// defaults), logging, Kubernetes clients, the metrics and health endpoints,
// leader election, and the controller's lifecycle.
package app

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/alerts"
	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/controller/budget"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/fingerprint"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Options are the command line, as the user gave it.
type Options struct {
	Names annotations.Names

	AutoReloadAll      bool
	ReloadStrategy     string
	ReloadOnCreate     string // the original takes "true"/"false" strings
	ReloadOnDelete     string
	SyncAfterRestart   bool
	ResourcesToIgnore  []string
	IgnoredWorkloads   []string
	Namespaces         []string
	NamespacesToIgnore []string
	NamespaceSelectors []string
	ResourceSelectors  []string
	LogFormat          string
	LogLevel           string
	IsArgoRollouts     string
	IsOpenShift        string
	WorkloadKinds      []string
	EnableCSI          bool
	WebhookURL         string

	EnableHA        bool
	HALockName      string
	HALeaseDuration time.Duration
	HARenewDeadline time.Duration
	HARetryPeriod   time.Duration

	MinReloadInterval time.Duration
	APIPollInterval   time.Duration
	UsedKeysOnly      bool
	AuditLog          bool
	// MaxRollouts and MaxRolloutsPerNamespace are the rollout budget;
	// RolloutDeadline frees the slot of a StatefulSet or DaemonSet rollout.
	MaxRollouts, MaxRolloutsPerNamespace int
	RolloutDeadline                      time.Duration
	// ChangeWindow is the default change window (decide.ParseWindow).
	ChangeWindow string
	// ReloadApproval is the default approval mode (decide.ParseApproval).
	ReloadApproval string
	// HashAlgorithm digests the data fingerprints (hash.ParseAlgorithm).
	HashAlgorithm string
	// FingerprintKeySecret names the Secret of the per-key fingerprints'
	// key: "name" in the controller's namespace, or "namespace/name".
	FingerprintKeySecret string

	EnablePProf bool
	PProfAddr   string
	MetricsAddr string
	Workers     int
	Kubeconfig  string
	QPS         float32
	Burst       int
	// AdoptionQPS paces the first applied-hashes record of each workload
	// (0: a quarter of QPS).
	AdoptionQPS float32
}

// DefaultOptions are the original's defaults.
func DefaultOptions() *Options {
	return &Options{
		Names:           annotations.Defaults(),
		ReloadStrategy:  string(controller.EnvVars),
		ReloadOnCreate:  "false",
		ReloadOnDelete:  "false",
		LogLevel:        "info",
		IsArgoRollouts:  "false",
		IsOpenShift:     "",
		HALockName:      "stakater-reloader-lock",
		HALeaseDuration: 15 * time.Second,
		HARenewDeadline: 10 * time.Second,
		HARetryPeriod:   2 * time.Second,
		PProfAddr:       "127.0.0.1:6060", // pprof has no authentication
		MetricsAddr:     ":9090",
		APIPollInterval: 30 * time.Second,
		RolloutDeadline: budget.DefaultDeadline,
		Workers:         controller.DefaultWorkers,
		QPS:             200,
		Burst:           400,

		FingerprintKeySecret: fingerprint.DefaultSecretName,
	}
}

// AddFlags binds the options to fs with the original's flag names.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.AutoReloadAll, "auto-reload-all", o.AutoReloadAll, "Reload every workload that uses a changed ConfigMap or Secret, unless it opts out with reloader.stakater.com/auto: \"false\"")
	fs.StringVar(&o.ReloadStrategy, "reload-strategy", o.ReloadStrategy, "How a reload is written to the pod template: env-vars (STAKATER_* variables) or annotations (reloader.stakater.com/last-reloaded-from)")
	fs.StringVar(&o.ReloadOnCreate, "reload-on-create", o.ReloadOnCreate, "Reload workloads when a ConfigMap or Secret they watch is created after them (true|false)")
	fs.StringVar(&o.ReloadOnDelete, "reload-on-delete", o.ReloadOnDelete, "Reload workloads when a ConfigMap or Secret they watch is deleted (true|false)")
	fs.BoolVar(&o.SyncAfterRestart, "sync-after-restart", o.SyncAfterRestart, "Accepted for compatibility: this controller always applies changes made while it was down, and never restarts workloads that are up to date")
	fs.StringSliceVar(&o.ResourcesToIgnore, "resources-to-ignore", o.ResourcesToIgnore, "Resource kind not to watch: configMaps or secrets (not both)")
	fs.StringSliceVar(&o.IgnoredWorkloads, "ignored-workload-types", o.IgnoredWorkloads, "Workload types not to reload: jobs, cronjobs, or both")
	fs.StringSliceVar(&o.Namespaces, "namespaces", o.Namespaces, "Watch only these namespaces, with namespaced watches (no cluster-wide permissions needed)")
	fs.StringSliceVar(&o.NamespacesToIgnore, "namespaces-to-ignore", o.NamespacesToIgnore, "Namespaces never to reload in")
	fs.StringSliceVar(&o.NamespaceSelectors, "namespace-selector", o.NamespaceSelectors, "Reload only in namespaces with these labels (key:value, key=value, key:* for any value)")
	fs.StringSliceVar(&o.ResourceSelectors, "resource-label-selector", o.ResourceSelectors, "Watch only ConfigMaps and Secrets with these labels (key:value, key=value, key:*), filtered by the apiserver")
	fs.StringVar(&o.LogFormat, "log-format", o.LogFormat, "Log format: \"\" (text) or json")
	fs.StringVar(&o.LogLevel, "log-level", o.LogLevel, "Log level: trace, debug, info, warning, error, fatal or panic")
	fs.StringVar(&o.IsArgoRollouts, "is-Argo-Rollouts", o.IsArgoRollouts, "Reload Argo Rollouts (true|false)")
	fs.StringVar(&o.IsOpenShift, "is-openshift", o.IsOpenShift, "Reload OpenShift DeploymentConfigs (true|false; unset: on when the apps.openshift.io API is served)")
	fs.StringArrayVar(&o.WorkloadKinds, "workload-kind", o.WorkloadKinds, "Also reload this custom workload kind, repeatable: GROUP/VERSION/RESOURCE,kind=KIND[,template=.spec.template][,progress=none|condition:TYPE], e.g. apps.kruise.io/v1alpha1/clonesets,kind=CloneSet (OpenKruise CloneSet) or example.com/v1/podsets,kind=PodSet,template=.spec.podTemplate,progress=condition:Ready (docs/workload-kinds.md)")
	fs.BoolVar(&o.EnableCSI, "enable-csi-integration", o.EnableCSI, "Reload on Secrets Store CSI SecretProviderClassPodStatus changes")
	fs.StringVar(&o.WebhookURL, "webhook-url", o.WebhookURL, "Send a webhook instead of reloading (deprecated: the URL is a credential; set RELOADER_WEBHOOK_URL from a Secret)")

	fs.BoolVar(&o.EnableHA, "enable-ha", o.EnableHA, "Run several replicas with leader election (needs POD_NAME and POD_NAMESPACE)")
	fs.StringVar(&o.HALockName, "ha-lock-name", o.HALockName, "Name of the coordination.k8s.io Lease used for leader election")
	fs.DurationVar(&o.HALeaseDuration, "ha-lease-duration", o.HALeaseDuration, "Leader election lease duration")
	fs.DurationVar(&o.HARenewDeadline, "ha-renew-deadline", o.HARenewDeadline, "Leader election renew deadline")
	fs.DurationVar(&o.HARetryPeriod, "ha-retry-period", o.HARetryPeriod, "Leader election retry period")

	fs.BoolVar(&o.UsedKeysOnly, "reload-on-used-keys-only", o.UsedKeysOnly, "Reload a workload only when a key it uses changes (keyRefs, volume items; envFrom and whole volumes count whole unless configmap|secret.reloader.stakater.com/keys lists keys); a workload chooses with reloader.stakater.com/reload-on-used-keys-only. Switching rolls nothing")
	fs.StringVar(&o.FingerprintKeySecret, "fingerprint-key-secret", o.FingerprintKeySecret, "Secret holding the key of the per-key fingerprints (HMAC-SHA-256), so a per-key record reveals nothing testable offline: NAME in the controller's namespace (RELOADER_NAMESPACE, else POD_NAMESPACE) or NAMESPACE/NAME. Created on first start with --reload-on-used-keys-only; read, if present, without it")
	fs.BoolVar(&o.AuditLog, "audit-log", o.AuditLog, "Write one JSON line (schema reloader.dev/audit/v1) per reload, deferral, skip and refused write to stdout: workload, resource and resourceVersion, the field manager of the write that changed it, hash prefixes, decision and reason; never a value. Logs stay on stderr")
	fs.IntVar(&o.MaxRollouts, "max-concurrent-rollouts", o.MaxRollouts, "Most rollouts the controller started, of Deployments, StatefulSets and DaemonSets it manages, going at once, cluster-wide: a due reload waits while that many are (observedGeneration, updated and available replicas; each until it passes its deadline, see --rollout-deadline), in the order the reloads became due (0: no limit)")
	fs.StringVar(&o.HashAlgorithm, "hash-algorithm", o.HashAlgorithm, "Digest of the ConfigMap and Secret fingerprints: sha1 (stakater's, so its STAKATER_* values stay valid) or sha256; empty: sha256 in FIPS 140-only mode (GODEBUG=fips140=only, where SHA-1 is refused), else sha1. Switching rolls each managed workload once")
	fs.StringVar(&o.ChangeWindow, "change-window", o.ChangeWindow, "Default change window of workloads without reloader.stakater.com/change-window: reloads due outside it are applied when it opens. A cron schedule of the window's starts (optional CRON_TZ=<zone>) and how long it stays open, several separated by ';', e.g. 'CRON_TZ=Europe/Berlin 0 22 * * 1-5 8h' (empty: always open)")
	fs.StringVar(&o.ReloadApproval, "reload-approval", o.ReloadApproval, "Default approval mode of workloads without reloader.stakater.com/approval: none (reload at once), required (a due reload waits until a person annotates the workload with reloader.stakater.com/approve=<change>, named in its ReloadAwaitingApproval Event) or notify-only (announce the change, never reload); empty: none")
	fs.IntVar(&o.MaxRolloutsPerNamespace, "max-concurrent-rollouts-per-namespace", o.MaxRolloutsPerNamespace, "As --max-concurrent-rollouts, within each namespace (0: no limit)")
	fs.DurationVar(&o.RolloutDeadline, "rollout-deadline", o.RolloutDeadline, "How long a StatefulSet or DaemonSet rollout the controller started holds its slot of --max-concurrent-rollouts; past it the rollout frees its slot, with a ReloadRolloutStalled Event (a Deployment's deadline is its own progressDeadlineSeconds)")
	fs.DurationVar(&o.MinReloadInterval, "min-reload-interval", o.MinReloadInterval, "Least time between two reloads of one workload; changes arriving sooner are coalesced into the next reload (0: no limit)")
	fs.DurationVar(&o.APIPollInterval, "api-discovery-interval", o.APIPollInterval, "How often to look for an API asked for (--is-Argo-Rollouts, --enable-csi-integration) that the apiserver does not serve yet; it is watched from then on, without a restart")
	fs.BoolVar(&o.EnablePProf, "enable-pprof", o.EnablePProf, "Serve pprof on --pprof-addr (never on the metrics address)")
	fs.StringVar(&o.PProfAddr, "pprof-addr", o.PProfAddr, "Address of the pprof server")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", o.MetricsAddr, "Address of the /metrics, /live and /readyz server")
	fs.IntVar(&o.Workers, "workers", o.Workers, "Workloads synced concurrently")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig file (default: $KUBECONFIG, then in-cluster configuration)")
	fs.Float32Var(&o.QPS, "kube-api-qps", o.QPS, "Client-side request rate limit to the apiserver")
	fs.Float32Var(&o.AdoptionQPS, "adoption-qps", o.AdoptionQPS, "Writes per second of the first applied-hashes record of workloads already running at start (metadata only; 0: a quarter of --kube-api-qps), so they never hold up a reload")
	fs.IntVar(&o.Burst, "kube-api-burst", o.Burst, "Client-side request burst to the apiserver")

	n := &o.Names
	fs.StringVar(&n.ConfigMapReload, "configmap-annotation", n.ConfigMapReload, "Annotation naming ConfigMaps to reload for")
	fs.StringVar(&n.SecretReload, "secret-annotation", n.SecretReload, "Annotation naming Secrets to reload for")
	fs.StringVar(&n.Auto, "auto-annotation", n.Auto, "Annotation enabling reloads for every ConfigMap and Secret a workload uses")
	fs.StringVar(&n.Ignore, "ignore-annotation", n.Ignore, "Annotation on a ConfigMap or Secret that makes the controller ignore it")
	fs.StringVar(&n.ConfigMapAuto, "configmap-auto-annotation", n.ConfigMapAuto, "Annotation enabling reloads for every ConfigMap a workload uses")
	fs.StringVar(&n.SecretAuto, "secret-auto-annotation", n.SecretAuto, "Annotation enabling reloads for every Secret a workload uses")
	fs.StringVar(&n.Search, "auto-search-annotation", n.Search, "Annotation on a workload enabling search for matching ConfigMaps and Secrets")
	fs.StringVar(&n.Match, "search-match-annotation", n.Match, "Annotation marking a ConfigMap or Secret as matching a search")
	fs.StringVar(&n.PausePeriod, "pause-deployment-annotation", n.PausePeriod, "Annotation giving the period to pause a Deployment after a reload")
	fs.StringVar(&n.PausedAt, "pause-deployment-time-annotation", n.PausedAt, "Annotation recording when the controller paused a Deployment")
	fs.StringVar(&n.ConfigMapExclude, "configmap-exclude-annotation", n.ConfigMapExclude, "Annotation listing ConfigMaps a workload does not reload for")
	fs.StringVar(&n.SecretExclude, "secret-exclude-annotation", n.SecretExclude, "Annotation listing Secrets a workload does not reload for")
}

// Resolved is the validated configuration the process runs with.
type Resolved struct {
	Controller controller.Options
	Logger     *slog.Logger
	PodName    string
	PodNS      string
	// MetaNamespace and DeploymentName (RELOADER_NAMESPACE,
	// RELOADER_DEPLOYMENT_NAME) say where to publish reloader-meta-info.
	MetaNamespace  string
	DeploymentName string
	// The rest of what the environment says, read by Resolve only.
	// CountByNamespace: METRICS_COUNT_BY_NAMESPACE=enabled.
	CountByNamespace bool
	// Alerts and AlertsOn: ALERT_* (alerts.OptionsFromEnv).
	Alerts   alerts.Options
	AlertsOn bool
	// GOGCSet: GOGC is set, so the runtime's GC target is left alone.
	GOGCSet bool
	// KubeconfigEnv is $KUBECONFIG: when set, it is used instead of the
	// in-cluster configuration.
	KubeconfigEnv string
	// FingerprintKey is the Secret of the per-key fingerprints' key; its
	// Namespace is "" when the controller has none (fingerprintkey.go).
	FingerprintKey fingerprint.Ref
}

// Resolve validates everything and fails with a message naming the flag.
// getenv is os.Getenv in production: the controller's environment is read
// here and nowhere else. Every problem is reported, not just the first, in
// the order of the steps below.
func (o *Options) Resolve(getenv func(string) string) (*Resolved, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	logger, err := newLogger(o.LogFormat, o.LogLevel, os.Stderr)
	if err != nil {
		bad("%v", err)
	}
	co := controller.Options{Options: decide.Options{Names: o.Names, AutoReloadAll: o.AutoReloadAll,
		MinReloadInterval: o.MinReloadInterval, UsedKeysOnly: o.UsedKeysOnly}, Workers: o.Workers, Logger: logger}
	if o.AuditLog {
		// stdout, apart from the logs on stderr: the controller writes no file.
		co.Audit = audit.New(os.Stdout)
	}
	o.resolveReload(&co, bad)
	o.resolveIgnored(&co, bad)
	o.resolveScope(&co, getenv, bad)
	if o.Workers < 1 {
		bad("--workers=%d: must be at least 1", o.Workers)
	}
	switch {
	case o.AdoptionQPS < 0:
		bad("--adoption-qps=%g: must not be negative", o.AdoptionQPS)
	case o.AdoptionQPS == 0:
		co.AdoptionRate = float64(o.QPS) / 4
	default:
		co.AdoptionRate = float64(o.AdoptionQPS)
	}
	o.checkAnnotationNames(bad)
	co.ArgoRollouts = parseBoolFlag("is-Argo-Rollouts", o.IsArgoRollouts, bad)
	co.OpenShift = parseBoolFlag("is-openshift", o.IsOpenShift, bad)
	co.Declared = o.declaredKinds(bad)
	co.CSI = o.EnableCSI
	if u, where, err := o.webhookURL(getenv, logger); err != nil {
		bad("%v", err)
	} else if u != "" {
		wh, err := alerts.NewWebhook(alerts.Options{URL: u, Logger: logger})
		if err != nil {
			bad("%s: %v", where, err)
		}
		co.Webhook = wh
	}
	r := &Resolved{Controller: co, Logger: logger,
		MetaNamespace: getenv("RELOADER_NAMESPACE"), DeploymentName: getenv("RELOADER_DEPLOYMENT_NAME")}
	o.resolveEnvironment(r, getenv, bad)
	o.resolveFingerprintKey(r, getenv, bad)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

// resolveReload reads how and when a reload happens: the strategy, the
// intervals, and whether creating or deleting a resource reloads.
func (o *Options) resolveReload(co *controller.Options, bad func(string, ...any)) {
	if o.MinReloadInterval < 0 {
		bad("--min-reload-interval=%s: must not be negative", o.MinReloadInterval)
	}
	if o.MaxRollouts < 0 {
		bad("--max-concurrent-rollouts=%d: must not be negative", o.MaxRollouts)
	}
	if o.MaxRolloutsPerNamespace < 0 {
		bad("--max-concurrent-rollouts-per-namespace=%d: must not be negative", o.MaxRolloutsPerNamespace)
	}
	if o.RolloutDeadline <= 0 {
		bad("--rollout-deadline=%s: must be positive", o.RolloutDeadline)
	}
	if w, err := decide.ParseWindow(o.ChangeWindow); err != nil {
		bad("--change-window: %v", err)
	} else {
		co.ChangeWindow = w
	}
	if a, err := decide.ParseApproval(o.ReloadApproval); err != nil {
		bad("--reload-approval: %v", err)
	} else {
		co.Approval = a
	}
	if a, err := hash.ParseAlgorithm(o.HashAlgorithm); err != nil {
		bad("--hash-algorithm: %v", err)
	} else {
		co.Hash = a
	}
	co.Budget = budget.Options{Max: o.MaxRollouts, PerNamespace: o.MaxRolloutsPerNamespace, Deadline: o.RolloutDeadline}
	if o.APIPollInterval <= 0 {
		bad("--api-discovery-interval=%s: must be positive", o.APIPollInterval)
	}
	co.APIPollInterval = o.APIPollInterval
	switch o.ReloadStrategy {
	case string(controller.EnvVars), string(controller.Annotations):
		co.Strategy = controller.Strategy(o.ReloadStrategy)
	default:
		bad("--reload-strategy=%q: must be one of: env-vars, annotations", o.ReloadStrategy)
	}
	co.ReloadOnCreate = parseBoolFlag("reload-on-create", o.ReloadOnCreate, bad)
	co.ReloadOnDelete = parseBoolFlag("reload-on-delete", o.ReloadOnDelete, bad)
}

// resolveIgnored reads which resource kinds and workload kinds the
// controller leaves alone.
func (o *Options) resolveIgnored(co *controller.Options, bad func(string, ...any)) {
	if len(o.ResourcesToIgnore) > 1 {
		bad("--resources-to-ignore=%s: only configMaps or secrets, not both", strings.Join(o.ResourcesToIgnore, ","))
	}
	for _, r := range o.ResourcesToIgnore {
		switch strings.ToLower(r) {
		case "configmaps":
			co.IgnoreConfigMaps = true
		case "secrets":
			co.IgnoreSecrets = true
		default:
			bad("--resources-to-ignore=%q: only configMaps or secrets", r)
		}
	}
	co.IgnoredKinds = map[workload.Kind]bool{}
	for _, w := range o.IgnoredWorkloads {
		switch strings.ToLower(w) {
		case "jobs":
			co.IgnoredKinds[workload.Job] = true
		case "cronjobs":
			co.IgnoredKinds[workload.CronJob] = true
		default:
			bad("--ignored-workload-types=%q: accepts jobs, cronjobs, or both", w)
		}
	}
}

// resolveScope reads which namespaces and resources the controller watches.
// KUBERNETES_NAMESPACE stands in for --namespaces when that is not given.
func (o *Options) resolveScope(co *controller.Options, getenv func(string) string, bad func(string, ...any)) {
	co.Namespaces = slices.Clone(o.Namespaces)
	if ns := getenv("KUBERNETES_NAMESPACE"); ns != "" && len(co.Namespaces) == 0 {
		co.Namespaces = []string{ns}
	}
	for _, ns := range co.Namespaces {
		if ns == "" {
			bad("--namespaces: empty namespace name")
		}
	}
	co.NamespacesToIgnore = slices.Clone(o.NamespacesToIgnore)
	if len(o.NamespaceSelectors) > 0 {
		sel, err := parseSelectorList(o.NamespaceSelectors)
		if err != nil {
			bad("--namespace-selector: %v", err)
		} else {
			co.NamespaceSelector = sel
		}
	}
	if len(o.ResourceSelectors) > 0 {
		sel, err := parseSelectorList(o.ResourceSelectors)
		if err != nil {
			bad("--resource-label-selector: %v", err)
		} else {
			co.ResourceSelector = sel.String()
		}
	}
}

// checkAnnotationNames refuses an empty annotation name: it would match
// every key, or none.
func (o *Options) checkAnnotationNames(bad func(string, ...any)) {
	for flag, name := range map[string]string{
		"configmap-annotation": o.Names.ConfigMapReload, "secret-annotation": o.Names.SecretReload,
		"auto-annotation": o.Names.Auto, "ignore-annotation": o.Names.Ignore,
		"configmap-auto-annotation": o.Names.ConfigMapAuto, "secret-auto-annotation": o.Names.SecretAuto,
		"auto-search-annotation": o.Names.Search, "search-match-annotation": o.Names.Match,
		"pause-deployment-annotation": o.Names.PausePeriod, "pause-deployment-time-annotation": o.Names.PausedAt,
	} {
		if strings.TrimSpace(name) == "" {
			bad("--%s: annotation name must not be empty", flag)
		}
	}
}

// resolveEnvironment reads what the controller learns about itself from its
// environment: where it runs, alerting, metrics, GC tuning and, with
// --enable-ha, the identity it holds the lease under.
func (o *Options) resolveEnvironment(r *Resolved, getenv func(string) string, bad func(string, ...any)) {
	// Events about the controller itself go on its Deployment, where
	// `kubectl describe` shows them, else on its Pod.
	switch {
	case r.MetaNamespace != "" && r.DeploymentName != "":
		r.Controller.Self = &corev1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: r.MetaNamespace, Name: r.DeploymentName}
	case getenv("POD_NAMESPACE") != "" && getenv("POD_NAME") != "":
		r.Controller.Self = &corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: getenv("POD_NAMESPACE"), Name: getenv("POD_NAME")}
	}
	r.CountByNamespace = getenv("METRICS_COUNT_BY_NAMESPACE") == "enabled"
	var err error
	if r.Alerts, r.AlertsOn, err = alerts.OptionsFromEnv(getenv); err != nil {
		bad("%v", err)
	}
	r.GOGCSet = getenv("GOGC") != ""
	r.KubeconfigEnv = getenv("KUBECONFIG")
	if o.EnableHA {
		r.PodName, r.PodNS = getenv("POD_NAME"), getenv("POD_NAMESPACE")
		if r.PodName == "" {
			bad("--enable-ha: POD_NAME not set, cannot run in HA mode without POD_NAME set")
		}
		if r.PodNS == "" {
			bad("--enable-ha: POD_NAMESPACE not set, cannot run in HA mode without POD_NAMESPACE set")
		}
		if o.HALeaseDuration <= o.HARenewDeadline || o.HARenewDeadline <= o.HARetryPeriod || o.HARetryPeriod <= 0 {
			bad("--ha-lease-duration (%s) must exceed --ha-renew-deadline (%s), which must exceed --ha-retry-period (%s) > 0", o.HALeaseDuration, o.HARenewDeadline, o.HARetryPeriod)
		}
	}
}

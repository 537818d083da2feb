package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/reloader-dev/reloader/controller/buildinfo"
	"github.com/reloader-dev/reloader/controller/explain"
	"github.com/reloader-dev/reloader/controller/metainfo"

	"github.com/reloader-dev/reloader/internal/exitcode"
)

// PluginName is the name under which the binary acts as the kubectl plugin
// `kubectl reloader`.
const PluginName = "kubectl-reloader"

// IsPlugin reports whether argv0 invokes the binary as the kubectl plugin.
func IsPlugin(argv0 string) bool {
	return strings.TrimSuffix(filepath.Base(argv0), ".exe") == PluginName
}

// NewPluginCommand is `kubectl reloader`: the read-only subcommands only, so
// the plugin can never start a controller with the user's credentials.
func NewPluginCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kubectl-reloader",
		Short: "Ask the reloader controller's rules about your workloads",
		// kubectl runs kubectl-reloader for `kubectl reloader`.
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl reloader"},
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildinfo.Get().Version,
	}
	cmd.AddCommand(newExplainCommand("kubectl reloader"))
	cmd.CompletionOptions.DisableDefaultCmd = true
	return cmd
}

// exitError carries an exit code of the shared table; an empty message
// prints nothing.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// ExitCode puts the error in its class of the table.
func (e *exitError) ExitCode() exitcode.Code { return exitcode.Code(e.code) }

func usageError(err error) error { return &exitError{code: explain.ExitUsage, err: err} }

// ExitCode is the process exit code for an error returned by a command, by
// the table every command shares (internal/exitcode).
func ExitCode(err error) int { return int(exitcode.Of(err)) }

type explainFlags struct {
	namespace, context, output, controllerNS, readyzURL, optionsFrom string
}

// newExplainCommand declares the command, its help and its flags; it is
// long for its help text, not its logic.
func newExplainCommand(parent string) *cobra.Command {
	o := DefaultOptions()
	var f explainFlags
	cmd := &cobra.Command{
		Use:   "explain KIND/NAME",
		Short: "Explain why a workload did (or did not) reload",
		Long: `explain answers "why did (or didn't) my workload reload?" from the cluster, with your
kubeconfig and the controller's effective options (read from the reloader-meta-info
ConfigMap the controller publishes; the controller flags given to explain otherwise).

It decides with the controller's own code, so it cannot disagree with it, and prints:
whether the workload is opted in and by which annotation on which object; each
ConfigMap, Secret and SecretProviderClass it uses and how, whether it is watched and
why (or why not), its hash, the hash last applied and whether a reload is due; the
last reload; pause and storm-control holds; the controller's scope; whether a
controller runs and leads; and problems nobody reports (subPath mounts).

It only reads: get and list on the workload kind, configmaps, secrets and events in
the workload's namespace; optionally configmaps cluster-wide (to find
reloader-meta-info), namespaces (for --namespace-selector), deployments, leases and
the fingerprint key Secret (per-key reloads) in the controller's namespace, and
secretproviderclasses(podstatuses) with CSI. What it may not read is named in the
output, and the rest is still explained.

Exit codes: 0 up to date or not watched, 4 a reload is due or blocked, 1 error,
2 usage.`,
		Example: fmt.Sprintf(`  # Why did my Deployment not reload?
  %[1]s explain deployment/web -n team-a

  # The same as a kubectl plugin (the binary installed as kubectl-reloader):
  kubectl reloader explain deploy/web -n team-a

  # For scripts: JSON, and the exit code (4: a reload is due or blocked)
  %[1]s explain sts/db -n team-a --output json | jq .verdict

  # Check the controller's readiness through a port-forward to its metrics port:
  kubectl -n reloader port-forward deploy/reloader 9090 &
  %[1]s explain deploy/web -n team-a --controller-namespace reloader --readyz-url http://127.0.0.1:9090/readyz

  # No controller installed yet: explain with the options it would run with
  %[1]s explain deploy/web -n team-a --options-from flags --namespaces team-a`, parent),
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("explain takes one KIND/NAME, got %d arguments", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExplain(cmd.Context(), cmd.OutOrStdout(), cmd.Flags(), o, f, args[0], os.Getenv)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	fs := cmd.Flags()
	fs.StringVarP(&f.namespace, "namespace", "n", "", "Namespace of the workload (default: the kubeconfig context's)")
	fs.StringVar(&f.context, "context", "", "Kubeconfig context to use")
	fs.StringVarP(&f.output, "output", "o", "text", "Output format: text or json")
	fs.StringVar(&f.controllerNS, "controller-namespace", "", "Namespace of the controller's reloader-meta-info (default: searched cluster-wide by its label)")
	fs.StringVar(&f.readyzURL, "readyz-url", "", "The controller's /readyz URL, e.g. through kubectl port-forward")
	fs.StringVar(&f.optionsFrom, "options-from", "auto", "Controller options: auto (reloader-meta-info when found, else flags), meta-info, or flags")
	o.AddFlags(fs)
	// The controller's own runtime flags say nothing about its decisions.
	for _, name := range []string{"metrics-addr", "enable-pprof", "pprof-addr", "workers", "kube-api-qps", "kube-api-burst", "adoption-qps",
		"log-format", "log-level", "ha-lease-duration", "ha-renew-deadline", "ha-retry-period", "sync-after-restart"} {
		_ = fs.MarkHidden(name)
	}
	return cmd
}

// runExplain is the command's body: flags to clients, clients to the
// report, the report to the output; one straight line kept in one place so
// the order of its checks (and their exit codes) reads as it runs.
func runExplain(ctx context.Context, out io.Writer, fs *pflag.FlagSet, o *Options, f explainFlags, target string, getenv func(string) string) error {
	kind, name, targetErr := explain.ParseTarget(target)
	if targetErr != nil && !explain.UnknownKind(targetErr) {
		return usageError(targetErr)
	}
	if f.output != "text" && f.output != "json" {
		return usageError(fmt.Errorf("--output=%q: want text or json", f.output))
	}
	if f.optionsFrom != "auto" && f.optionsFrom != "meta-info" && f.optionsFrom != "flags" {
		return usageError(fmt.Errorf("--options-from=%q: want auto, meta-info or flags", f.optionsFrom))
	}
	cfg, ns, err := userConfig(o.Kubeconfig, f.context)
	if err != nil {
		return err
	}
	if f.namespace != "" {
		ns = f.namespace
	}
	cfg.UserAgent = "reloader-explain/" + buildinfo.Get().Version
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building the Kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building the dynamic client: %w", err)
	}
	eo := explain.Options{Kind: kind, Namespace: ns, Name: name, ReadyzURL: f.readyzURL, LockName: o.HALockName}
	var notes []string
	source := o
	if f.optionsFrom != "flags" {
		mi, err := findMetaInfo(ctx, cs, f.controllerNS, ns)
		switch {
		case err != nil:
			return err
		case mi.info != nil:
			source = mi.info.options
			eo.OptionsFrom = "reloader-meta-info " + mi.info.namespace + "/" + metainfo.Name
			if mi.info.deployment.Name != "" {
				eo.Deployment = &explain.Object{Kind: "Deployment", Namespace: mi.info.deployment.Namespace, Name: mi.info.deployment.Name}
			}
			eo.HA, eo.LeaseNamespace = mi.info.options.EnableHA, mi.info.namespace
			if mi.info.options.WebhookURL != "" {
				notes = append(notes, "the controller runs in webhook mode (--webhook-url): a due reload is sent to the webhook instead of rolling the workload")
				source.WebhookURL = ""
			}
		case f.optionsFrom == "meta-info":
			return fmt.Errorf("--options-from=meta-info: %s", mi.why)
		default:
			eo.MetaInfoAbsent = mi.absent
			eo.OptionsFrom = "flags given to explain (" + mi.why + ")"
		}
		notes = append(notes, mi.notes...)
	} else {
		eo.OptionsFrom = "flags given to explain (--options-from=flags)"
	}
	if source == o {
		eo.HA, eo.LeaseNamespace = o.EnableHA, getenv("POD_NAMESPACE")
	}
	// Explain resolves the options as the controller did, minus what only
	// concerns running it (HA needs the pod's identity).
	resolvable := *source
	resolvable.EnableHA = false
	r, err := resolvable.Resolve(explainEnv(eo.LeaseNamespace, f.controllerNS))
	if err != nil {
		return fmt.Errorf("controller options from %s: %w", eo.OptionsFrom, err)
	}
	eo.Controller, eo.FingerprintKey = r.Controller, r.FingerprintKey
	if targetErr != nil { // a kind the controller's options declare, or none
		if eo.Kind, eo.Name, err = explain.ParseTargetOf(target, r.Controller.Declared); err != nil {
			return usageError(err)
		}
	}
	client := &http.Client{Timeout: 5 * time.Second}
	report, err := explain.Explain(ctx, explain.Clients{Kube: cs, Dynamic: dyn, Get: func(ctx context.Context, url string) (int, string, error) {
		return httpGet(ctx, client, url)
	}}, eo)
	if err != nil {
		return err
	}
	report.Hints = append(report.Hints, notes...)
	if f.output == "json" {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(report); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
	} else if err := report.WriteText(out); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if code := report.ExitCode(); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

// userConfig loads the user's kubeconfig (never the in-cluster identity:
// explain speaks for the user) and the context's namespace.
func userConfig(kubeconfig, kubeContext string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("loading the kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config): %w", err)
	}
	ns, _, err := cc.Namespace()
	if err != nil || ns == "" {
		ns = metav1.NamespaceDefault
	}
	return cfg, ns, nil
}

// metaInfo is a controller's published options.
type metaInfo struct {
	namespace  string
	options    *Options
	deployment deploymentRef
}

type deploymentRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

type metaInfoSearch struct {
	info   *metaInfo
	absent bool   // looked where it can be and found none
	why    string // why none is used
	notes  []string
}

// findMetaInfo finds the controller's reloader-meta-info: in controllerNS
// when given, else by its label cluster-wide; with several controllers, the
// one whose scope covers the workload's namespace. The two searches and the
// choice among several share their error reporting, hence one function.
func findMetaInfo(ctx context.Context, cs kubernetes.Interface, controllerNS, workloadNS string) (metaInfoSearch, error) {
	var s metaInfoSearch
	if controllerNS != "" {
		cm, err := cs.CoreV1().ConfigMaps(controllerNS).Get(ctx, metainfo.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			s.absent, s.why = true, fmt.Sprintf("no %s in namespace %s", metainfo.Name, controllerNS)
			return s, nil
		case err != nil:
			s.why = fmt.Sprintf("reading %s/%s: %v", controllerNS, metainfo.Name, err)
			s.notes = append(s.notes, "could not read the controller's options: "+s.why)
			return s, nil
		}
		mi, err := parseMetaInfo(controllerNS, cm.Data)
		if err != nil {
			return s, err
		}
		s.info = mi
		return s, nil
	}
	l, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: metainfo.LabelKey + "=" + metainfo.LabelValue})
	if err != nil {
		s.why = fmt.Sprintf("cannot search for %s cluster-wide (%v); pass --controller-namespace", metainfo.Name, err)
		s.notes = append(s.notes, s.why)
		return s, nil
	}
	var found []*metaInfo
	for i := range l.Items {
		if l.Items[i].Name != metainfo.Name {
			continue
		}
		mi, err := parseMetaInfo(l.Items[i].Namespace, l.Items[i].Data)
		if err != nil {
			s.notes = append(s.notes, err.Error())
			continue
		}
		found = append(found, mi)
	}
	if len(found) == 0 {
		s.absent, s.why = true, "no "+metainfo.Name+" found in the cluster"
		return s, nil
	}
	covering := slices.DeleteFunc(slices.Clone(found), func(m *metaInfo) bool {
		n := m.options.Namespaces
		return len(n) > 0 && !slices.Contains(n, workloadNS) || slices.Contains(m.options.NamespacesToIgnore, workloadNS)
	})
	where := func(ms []*metaInfo) string {
		var out []string
		for _, m := range ms {
			out = append(out, m.namespace)
		}
		return strings.Join(out, ", ")
	}
	switch {
	case len(found) == 1:
	case len(covering) == 1:
		found = covering
	case len(covering) == 0:
		// No controller covers the namespace: that is the answer; explain
		// it with one of them, whose scope says so.
		s.notes = append(s.notes, fmt.Sprintf("%d controllers publish %s (in %s) and none covers namespace %s; explained with the one in %s",
			len(found), metainfo.Name, where(found), workloadNS, found[0].namespace))
	default:
		return s, usageError(fmt.Errorf("%d controllers publish %s and %d cover namespace %s (in %s): pick one with --controller-namespace",
			len(found), metainfo.Name, len(covering), workloadNS, where(covering)))
	}
	s.info = found[0]
	return s, nil
}

// parseMetaInfo reads a reloader-meta-info ConfigMap's data into the
// command-line options the controller runs with. The data is outside input
// (anyone who may write ConfigMaps there can change it): it is validated by
// Resolve like flags are.
func parseMetaInfo(namespace string, data map[string]string) (*metaInfo, error) {
	raw, ok := data["reloaderOptions"]
	if !ok {
		return nil, fmt.Errorf("ConfigMap %s/%s has no reloaderOptions", namespace, metainfo.Name)
	}
	var e effectiveOptions
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: reloaderOptions: %w", namespace, metainfo.Name, err)
	}
	mi := &metaInfo{namespace: namespace, options: e.options()}
	if d, ok := data["deploymentInfo"]; ok {
		if err := json.Unmarshal([]byte(d), &mi.deployment); err != nil {
			return nil, fmt.Errorf("ConfigMap %s/%s: deploymentInfo: %w", namespace, metainfo.Name, err)
		}
	}
	if mi.deployment.Namespace == "" {
		mi.deployment.Namespace = namespace
	}
	return mi, nil
}

// options turns published options back into a command line: the inverse of
// Options.effective.
func (e effectiveOptions) options() *Options {
	o := DefaultOptions()
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	n := &o.Names
	set(&n.ConfigMapReload, e.ConfigmapUpdateOnChangeAnnotation)
	set(&n.SecretReload, e.SecretUpdateOnChangeAnnotation)
	set(&n.Auto, e.ReloaderAutoAnnotation)
	set(&n.Ignore, e.IgnoreResourceAnnotation)
	set(&n.ConfigMapAuto, e.ConfigmapReloaderAutoAnnotation)
	set(&n.SecretAuto, e.SecretReloaderAutoAnnotation)
	set(&n.ConfigMapExclude, e.ConfigmapExcludeReloaderAnnotation)
	set(&n.SecretExclude, e.SecretExcludeReloaderAnnotation)
	set(&n.Search, e.AutoSearchAnnotation)
	set(&n.Match, e.SearchMatchAnnotation)
	set(&n.RolloutStrategy, e.RolloutStrategyAnnotation)
	set(&n.PausePeriod, e.PauseDeploymentAnnotation)
	set(&n.PausedAt, e.PauseDeploymentTimeAnnotation)
	o.AutoReloadAll = e.AutoReloadAll
	set(&o.ReloadStrategy, e.ReloadStrategy)
	o.ReloadOnCreate = fmt.Sprint(e.ReloadOnCreate)
	o.ReloadOnDelete = fmt.Sprint(e.ReloadOnDelete)
	o.IsArgoRollouts = fmt.Sprint(e.IsArgoRollouts)
	o.EnableHA = e.EnableHA
	o.EnableCSI = e.EnableCSIIntegration
	o.WebhookURL = e.WebhookURL
	o.ResourcesToIgnore = e.ResourcesToIgnore
	o.IgnoredWorkloads = e.WorkloadTypesToIgnore
	o.Namespaces = e.Namespaces
	o.NamespaceSelectors = e.NamespaceSelectors
	o.ResourceSelectors = e.ResourceSelectors
	o.NamespacesToIgnore = e.NamespacesToIgnore
	if d, err := time.ParseDuration(e.ReloadMinInterval); err == nil {
		o.MinReloadInterval = d
	}
	o.UsedKeysOnly = e.ReloadOnUsedKeysOnly
	o.MaxRollouts, o.MaxRolloutsPerNamespace = e.MaxConcurrentRollouts, e.MaxConcurrentRolloutsPerNamespace
	o.ChangeWindow = e.ChangeWindow
	o.ReloadApproval = e.ReloadApproval
	o.WorkloadKinds = e.WorkloadKinds
	o.HashAlgorithm = e.HashAlgorithm
	if e.FingerprintKeySecret != "" {
		o.FingerprintKeySecret = e.FingerprintKeySecret
	}
	return o
}

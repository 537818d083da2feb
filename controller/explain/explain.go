// Package explain answers "why did (or didn't) my workload reload?" from the
// cluster: it reads a workload, the ConfigMaps, Secrets and
// SecretProviderClasses of its namespace and the controller's traces (the
// applied-hashes record, Events, the Lease, /readyz) with the user's
// identity, and lets the controller's own decision code (controller.Inspect)
// say what a sync would do. It only reads (get and list); whatever it may not
// read is named in the report instead of failing it.
package explain

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/fingerprint"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"

	"github.com/reloader-dev/reloader/internal/exitcode"
)

// Verdicts, from the workload's point of view.
const (
	// UpToDate: every watched resource is applied; nothing is pending.
	UpToDate = "up-to-date"
	// NotWatched: the controller does not reload this workload (not opted
	// in, out of scope, kind not watched); nothing is pending.
	NotWatched = "not-watched"
	// ReloadDue: a watched resource differs from what was applied and the
	// controller will reload.
	ReloadDue = "reload-due"
	// Blocked: a reload is due but something holds it (no running
	// controller, pause, storm control, scope).
	Blocked = "blocked"
)

// Exit codes of `reloader explain`, from the table every command shares.
const (
	ExitOK      = int(exitcode.OK)      // explained: up to date or not watched
	ExitError   = int(exitcode.Error)   // could not explain (workload unreadable, bad options)
	ExitUsage   = int(exitcode.Usage)   // bad command line
	ExitPending = int(exitcode.Pending) // explained: a reload is due or blocked
)

// Options say what to explain and with which controller options.
type Options struct {
	Kind      workload.Kind
	Namespace string
	Name      string
	// Controller are the controller's effective options.
	Controller controller.Options
	// OptionsFrom says where they come from, for the report.
	OptionsFrom string
	// Deployment is the controller's own Deployment (from
	// reloader-meta-info), empty when unknown; HA, LockName and
	// LeaseNamespace locate its Lease.
	Deployment     *Object
	HA             bool
	LockName       string
	LeaseNamespace string
	// FingerprintKey is the Secret of the key the controller digests
	// per-key values under (Namespace "" when unknown): read, never
	// created, so the per-key hashes are the controller's.
	FingerprintKey fingerprint.Ref
	// ReadyzURL is the controller's /readyz when reachable (a port-forward).
	ReadyzURL string
	// MetaInfoAbsent is true when no reloader-meta-info exists where it was
	// looked for: no controller appears to be installed.
	MetaInfoAbsent bool
	Now            func() time.Time
}

// Clients read the cluster with the user's identity.
type Clients struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// Get fetches a URL (ReadyzURL) and returns its status and body.
	Get func(ctx context.Context, url string) (int, string, error)
}

// Explain reads the cluster and explains the workload. It fails only when the
// workload itself cannot be read or the options are unusable.
func Explain(ctx context.Context, cl Clients, o Options) (*Report, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	co := o.Controller
	co.Now = o.Now
	co.Dynamic = cl.Dynamic
	r := &Report{Workload: Object{Kind: string(o.Kind), Namespace: o.Namespace, Name: o.Name}}
	v, err := getWorkload(ctx, cl, o)
	if err != nil {
		return nil, err
	}
	rd := &reader{}
	co.KeyDigests = rd.fingerprintKey(ctx, cl, o.FingerprintKey)
	objs, existing := rd.configs(ctx, cl, o, &co, v)
	d, err := controller.Inspect(co, v, objs)
	if err != nil {
		return nil, fmt.Errorf("deciding for %s: %w", r.Workload, err)
	}
	r.Problems = slices.DeleteFunc(slices.Clone(d.Problems), func(p string) bool {
		// The controller's code saw what explain may not read as absent;
		// a "does not exist" about it would be false.
		for k := range rd.unreadable {
			kind, name, _ := strings.Cut(k, "/")
			if strings.Contains(p, fmt.Sprintf("%s %q", kindTitle(refs.Kind(kind)), name)) {
				return true
			}
		}
		return false
	})
	r.Skip = skipOf(d)
	r.Scope = scopeOf(o, co, co.ScopeGate(v, d), rd.namespaceUnknown)
	r.OptIn = optIn(co, v, d)
	r.Resources = resources(co, v, d, existing, rd.unreadable)
	r.Holds = append(approvalHolds(co, v, d), holds(d, o.Now())...)
	if len(d.Reloads) > 0 {
		r.Holds = append(r.Holds, budgetHolds(ctx, cl, co, v, rd)...)
	}
	r.LastReload = rd.lastReload(ctx, cl, o, strategyOf(co.Strategy, d.Marker))
	r.Controller = controllerStatus(ctx, cl, o)
	r.Hints = hints(co, v, r, existing, d)
	conclude(r, d)
	sort.Strings(rd.notes)
	r.Unreadable = rd.notes
	return r, nil
}

// skipOf is the reason a sync stops before looking at resources
// ("being_deleted", "namespace_not_selected"), as in reloader_skipped_total;
// "" when it goes on.
func skipOf(d decide.Decision) string {
	switch d.Gate {
	case decide.GateWorkload:
		return d.Skip
	case decide.GateNamespace:
		return "namespace_not_selected"
	}
	return ""
}

// conclude sets the verdict and summary.
func conclude(r *Report, d decide.Decision) {
	due := 0
	for _, res := range r.Resources {
		if res.Due {
			due++
		}
	}
	var blockers []string
	if !r.Scope.InScope && !r.Scope.Unknown {
		blockers = append(blockers, r.Scope.Reason)
	}
	if r.Controller.Running == "no" {
		blockers = append(blockers, "no controller is running")
	}
	blockers = append(blockers, r.Holds...)
	switch {
	case skipOf(d) == "being_deleted":
		r.Verdict, r.Summary = NotWatched, "the workload is being deleted: the controller does not reload it"
	case due > 0 && len(blockers) > 0:
		r.Verdict = Blocked
		r.Summary = fmt.Sprintf("a reload is due for %d resource(s) but blocked: %s", due, strings.Join(blockers, "; "))
	case due > 0:
		r.Verdict = ReloadDue
		r.Summary = fmt.Sprintf("a reload is due for %d resource(s): the controller applies it on its next sync", due)
	case !r.Scope.InScope && !r.Scope.Unknown:
		r.Verdict, r.Summary = NotWatched, "not watched: "+r.Scope.Reason
	case !d.Interested:
		r.Verdict, r.Summary = NotWatched, "not watched: the workload is not opted in to reloads"
	case !anyWatched(r.Resources):
		r.Verdict, r.Summary = NotWatched, "opted in, but watches none of the resources it uses (see each resource)"
	case !d.HasRecord:
		r.Verdict, r.Summary = UpToDate, "nothing pending, but the controller has not recorded this workload yet (no "+annotations.Applied+"): on its first sync it adopts the current state without rolling"
	default:
		r.Verdict, r.Summary = UpToDate, "up to date: every watched resource is applied"
	}
}

func anyWatched(rs []Resource) bool {
	return slices.ContainsFunc(rs, func(r Resource) bool { return r.Watched })
}

// strategyOf says which reload marker the template carries, as the
// controller's decision found it, or else the strategy it would write.
func strategyOf(fallback controller.Strategy, m decide.Marker) string {
	switch m.Strategy {
	case decide.Annotations:
		return string(m.Strategy) + " (" + m.Key + " on the pod template)"
	case decide.EnvVars:
		return string(m.Strategy) + " (" + m.Key + " on container " + m.Container + ")"
	}
	return string(fallback)
}

func scopeOf(o Options, co controller.Options, gate controller.ScopeGate, nsUnknown bool) Scope {
	s := Scope{InScope: true, Unknown: nsUnknown, Namespaces: co.Namespaces, NamespacesToIgnore: co.NamespacesToIgnore,
		ResourceSelector: co.ResourceSelector}
	if co.NamespaceSelector != nil {
		s.NamespaceSelector = co.NamespaceSelector.String()
	}
	if co.IgnoreConfigMaps {
		s.IgnoredResources = append(s.IgnoredResources, "configMaps")
	}
	if co.IgnoreSecrets {
		s.IgnoredResources = append(s.IgnoredResources, "secrets")
	}
	for k, on := range co.IgnoredKinds {
		if on {
			s.IgnoredWorkloads = append(s.IgnoredWorkloads, string(k))
		}
	}
	sort.Strings(s.IgnoredWorkloads)
	out := func(reason string) { s.InScope, s.Reason = false, reason }
	switch gate {
	case controller.OutsideNamespaces:
		out(fmt.Sprintf("namespace %s is outside the controller's namespaces (%s)", o.Namespace, strings.Join(co.Namespaces, ",")))
	case controller.NamespaceIgnored:
		out(fmt.Sprintf("namespace %s is in --namespaces-to-ignore", o.Namespace))
	case controller.NamespaceNotSelected:
		out(fmt.Sprintf("namespace %s does not match --namespace-selector %q", o.Namespace, s.NamespaceSelector))
	case controller.WorkloadKindIgnored:
		out(fmt.Sprintf("%s workloads are ignored (--ignored-workload-types)", o.Kind))
	case controller.RolloutsOff:
		out("Argo Rollouts are not watched (--is-Argo-Rollouts=false)")
	case controller.OpenShiftOff:
		out("DeploymentConfigs are not watched (--is-openshift)")
	}
	return s
}

func optIn(co controller.Options, v workload.View, d decide.Decision) OptIn {
	n := co.Names
	w := annotations.Workload{Meta: v.Object.GetAnnotations(), Template: v.Template.Annotations}
	var oi OptIn
	keys := n.OptInKeys()
	type at struct{ key, value, on string }
	read := map[at]bool{}
	notRead := map[at][]string{}
	for _, kind := range refs.Kinds() {
		where := d.ReadOn[kind]
		for _, k := range keys {
			if !relevant(n, k, kind) {
				continue
			}
			if val, ok := w.Meta[k]; ok {
				read[at{k, val, "metadata"}] = true
			}
			if val, ok := w.Template[k]; ok {
				a := at{k, val, "pod template"}
				if where == "metadata" {
					notRead[a] = append(notRead[a], kindTitle(kind)+"s")
				} else {
					read[a] = true
				}
			}
		}
	}
	for a := range read {
		oi.By = append(oi.By, Annotation{Key: a.key, Value: a.value, On: a.on})
	}
	for a, kinds := range notRead {
		oi.Shadowed = append(oi.Shadowed, Annotation{Key: a.key, Value: a.value, On: a.on, NotReadFor: kinds})
	}
	byKey := func(x, y Annotation) int { return strings.Compare(x.On+x.Key, y.On+y.Key) }
	slices.SortFunc(oi.By, byKey)
	slices.SortFunc(oi.Shadowed, byKey)
	oi.AutoReloadAll = co.AutoReloadAll
	oi.OptedIn = d.Interested
	if !oi.OptedIn {
		oi.Suggest = fmt.Sprintf("kubectl annotate %s/%s %s=true (on the metadata: reload for every ConfigMap and Secret it uses)",
			strings.ToLower(string(v.Kind)), v.Object.GetName(), n.Auto)
	}
	return oi
}

// relevant reports whether key k takes part in the decision for kind.
func relevant(n annotations.Names, k string, kind refs.Kind) bool {
	return k == n.Auto || k == n.Search || k == n.ReloadKey(kind) || k == n.TypedAutoKey(kind)
}

// holds says what holds the due reloads back: the pause period, storm
// control, the change window (the rollout budget is budgetHolds').
func holds(d decide.Decision, now time.Time) []string {
	var out []string
	if d.PausedFor > 0 {
		out = append(out, fmt.Sprintf("the Deployment is paused by the pause period until %s", now.Add(d.PausedFor).UTC().Format(time.RFC3339)))
	}
	if len(d.Reloads) == 0 {
		return out
	}
	if d.HeldFor > 0 {
		out = append(out, fmt.Sprintf("storm control (--min-reload-interval) holds it until %s", now.Add(d.HeldFor).UTC().Format(time.RFC3339)))
	}
	switch {
	case d.WindowInvalid:
		out = append(out, fmt.Sprintf("its change window (%s) is invalid or never opens: it waits until that is fixed", d.WindowFrom))
	case d.WindowOpensIn > 0:
		out = append(out, fmt.Sprintf("outside its change window %q (%s): applied when it opens at %s",
			d.WindowSpec, d.WindowFrom, now.Add(d.WindowOpensIn).UTC().Truncate(time.Second).Format(time.RFC3339)))
	}
	return out
}

func kindTitle(k refs.Kind) string { return k.Title() }

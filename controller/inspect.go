package controller

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Inspection is what one sync of a workload would decide, computed by the
// controller's own decision (decide.Decide) from objects read by someone
// else, writing nothing. It is what
// `reloader explain` reports, so the command and the controller cannot
// disagree about the rules.
type Inspection struct {
	// Skip is the reason a sync stops before looking at resources
	// ("being_deleted", "namespace_not_selected"), as in
	// reloader_skipped_total; empty when it goes on.
	Skip string
	// Interested is false when the workload carries no annotation that can
	// make it reload (and --auto-reload-all is off): the controller never
	// syncs it.
	Interested bool
	// OutOfScope is the setting that keeps the controller from watching the
	// workload at all; InScope when none does.
	OutOfScope ScopeGate
	// Watched lists the resources the workload watches, sorted.
	Watched []WatchedResource
	// Verdicts say, per resource used or watched, whether it is watched
	// and by which rule (decide.Decision.Verdicts).
	Verdicts []decide.Verdict
	// Marker is the reload marker the template carries; ReadOn where the
	// workload's annotations are read, per resource kind.
	Marker decide.Marker
	ReadOn map[refs.Kind]string
	// Problems are the configuration problems, with the text of the
	// ReloadFail Event the controller raises for them.
	Problems []string
	// Record is the applied-hashes record; HasRecord is false when the
	// controller never recorded one (it has not adopted the workload).
	Record    map[string]string
	HasRecord bool
	// Pending are the reloads a sync would apply now, sorted.
	Pending []PendingReload
	// HeldFor is how long storm control (--min-reload-interval) holds the
	// pending reloads.
	HeldFor time.Duration
	// WindowOpensIn is how long until the change window opens, when the
	// pending reloads wait for it; WindowSpec and WindowFrom are the window
	// and where it is set; WindowInvalid: it does not parse, and they wait
	// until it is fixed.
	WindowOpensIn          time.Duration
	WindowSpec, WindowFrom string
	WindowInvalid          bool
	// PausedFor is how long the pause period of a Deployment this controller
	// paused still runs.
	PausedFor time.Duration
}

// WatchedResource is one resource the workload watches.
type WatchedResource struct {
	Kind refs.Kind
	Name string
	// Auto is true when watched through auto or search (not by name).
	Auto bool
	// Hash is the current hash; Exists false when the resource is absent
	// (or invisible to the controller's watches).
	Hash   string
	Exists bool
	// Applied is the hash last applied and Known whether one is known, from
	// the record or, before the first record, a reload marker.
	Applied string
	Known   bool
	// PerKey is true when only Keys count; KeysWhy says which uses or
	// annotation decided the keys that count (decide.KeyScope).
	PerKey  bool
	Keys    []string
	KeysWhy string
}

// PendingReload is one reload a sync would apply.
type PendingReload struct {
	Kind refs.Kind
	Name string
	// Change is "changed", "created" or "deleted".
	Change string
	// Container is where the marker goes; NoContainer is true when no
	// container fits, so the sync skips it ("no_container").
	Container   string
	NoContainer bool
}

// Inspect decides for v as a sync would, from objs: the ConfigMaps and
// Secrets of v's namespace (*corev1.ConfigMap, *corev1.Secret), the
// SecretProviderClasses and SecretProviderClassPodStatuses (unstructured),
// and v's Namespace when a namespace selector is set. Objects are filtered by
// the resource selector as the controller's watches would be, and kept as
// its caches keep them; decide.Decide then reads them as a sync reads its
// caches.
func Inspect(o Options, v workload.View, objs []any) (Inspection, error) {
	if o.CSI && o.Dynamic == nil {
		return Inspection{}, ErrNoDynamic
	}
	if o.Names == (annotations.Names{}) {
		o.Names = annotations.Defaults()
	}
	var sel labels.Selector = labels.Everything()
	if o.ResourceSelector != "" {
		var err error
		if sel, err = labels.Parse(o.ResourceSelector); err != nil {
			return Inspection{}, fmt.Errorf("resource selector %q: %w", o.ResourceSelector, err)
		}
	}
	r := mapReader{config: map[string]any{}, statuses: map[string][]any{}, namespaces: map[string]map[string]string{}}
	for _, obj := range objs {
		if err := r.add(o, sel, obj); err != nil {
			return Inspection{}, err
		}
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	d := decide.Decide(o.DecideOptions(), v, r, now())
	in := Inspection{Interested: d.Interested, Problems: d.Problems, Record: d.Record, HasRecord: d.HasRecord, PausedFor: d.PausedFor,
		Verdicts: d.Verdicts, Marker: d.Marker, ReadOn: d.ReadOn}
	switch d.Gate {
	case decide.GateWorkload:
		in.Skip = d.Skip
	case decide.GateNamespace:
		in.Skip = "namespace_not_selected"
	}
	in.OutOfScope = o.scopeGate(v, d)
	for _, w := range d.Watched {
		// Applied shows what the record or a marker says; a first-sight
		// verdict is not a hash that was ever applied.
		known := w.Baseline.Known && w.Baseline.From != decide.FromFirstSight
		applied := w.Baseline.Hash
		if !known {
			applied = ""
		}
		in.Watched = append(in.Watched, WatchedResource{Kind: w.Kind, Name: w.Name, Auto: w.Auto,
			Hash: w.Hash, Exists: w.Hash != "", Applied: applied, Known: known,
			PerKey: w.Scope.PerKey, Keys: w.Scope.Keys, KeysWhy: w.Scope.Why})
	}
	for _, rl := range d.Reloads {
		p := PendingReload{Kind: rl.Kind, Name: rl.Name, Change: rl.Change.String()}
		var found bool
		p.Container, found = refs.ContainerFor(&v.Template.Spec, rl.Kind, rl.Name, rl.Auto)
		p.NoContainer = !found
		in.Pending = append(in.Pending, p)
	}
	if len(in.Pending) > 0 {
		in.HeldFor = d.HeldFor
		in.WindowOpensIn, in.WindowSpec, in.WindowFrom, in.WindowInvalid = d.WindowOpensIn, d.WindowSpec, d.WindowFrom, d.WindowInvalid
	}
	return in, nil
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

// scopeGate says which setting, if any, keeps v out of scope: the namespaces
// the watches cover, the decision's namespace gate, the kinds New starts
// informers for.
func (o Options) scopeGate(v workload.View, d decide.Decision) ScopeGate {
	ns := v.Object.GetNamespace()
	switch {
	case len(o.Namespaces) > 0 && !slices.Contains(o.Namespaces, ns):
		return OutsideNamespaces
	case o.DecideOptions().NamespaceIgnored(ns):
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

// mapReader is decide.Reader over objects given to Inspect: what the
// controller's caches would hold of them, keyed "<kind>/<ns>/<name>"
// (statuses "<ns>/<class>").
type mapReader struct {
	config     map[string]any
	statuses   map[string][]any
	namespaces map[string]map[string]string
}

var _ decide.Reader = mapReader{}

// add keeps obj as the controller's watch of its kind would, through the
// same transforms.
func (r mapReader) add(o Options, sel labels.Selector, obj any) error {
	switch t := obj.(type) {
	case *corev1.ConfigMap, *corev1.Secret:
		m := t.(metav1.Object)
		if !sel.Matches(labels.Set(m.GetLabels())) {
			return nil
		}
		kind := refs.ConfigMap
		if _, ok := t.(*corev1.Secret); ok {
			kind = refs.Secret
		}
		r.config[configKey(kind, m.GetNamespace(), m.GetName())] = stripConfig(o.Names, o.Hash, o.KeyDigests, obj)
		return nil
	case *corev1.Namespace:
		if o.NamespaceSelector != nil {
			r.namespaces[t.Name] = t.Labels
		}
		return nil
	case *unstructured.Unstructured:
		switch t.GetKind() {
		case "SecretProviderClass":
			m, err := workload.MetaFromUnstructured(t)
			if err != nil {
				return err
			}
			r.config[configKey(refs.SecretProviderClass, t.GetNamespace(), t.GetName())] = m
			return nil
		case "SecretProviderClassPodStatus":
			if !o.CSI {
				return nil
			}
			st, err := spcStatusFromUnstructured(o.Hash)(t)
			if err != nil {
				return err
			}
			if s := st.(*spcStatus); s.Class != "" {
				k := s.Namespace + "/" + s.Class
				r.statuses[k] = append(r.statuses[k], s)
			}
			return nil
		}
	}
	return fmt.Errorf("inspecting: unexpected object %T", obj)
}

func configKey(kind refs.Kind, ns, name string) string { return string(kind) + "/" + ns + "/" + name }

func (r mapReader) Resource(kind refs.Kind, ns, name string) decide.State {
	obj, ok := r.config[configKey(kind, ns, name)]
	return stateOf(kind, obj, ok, func() (string, bool) { return newestStatusHash(r.statuses[ns+"/"+name]) })
}

func (r mapReader) Names(kind refs.Kind, ns string) []string {
	var out []string
	prefix := string(kind) + "/" + ns + "/"
	for k := range r.config {
		if name, ok := strings.CutPrefix(k, prefix); ok && !strings.Contains(name, "/") {
			out = append(out, name)
		}
	}
	return out
}

// Birth: Inspect never saw the workload being created, so it is adopted as
// the controller adopts what its initial list holds.
func (mapReader) Birth(workload.Key) (decide.Birth, bool) { return decide.Birth{}, false }

func (r mapReader) NamespaceLabels(ns string) (map[string]string, bool) {
	l, ok := r.namespaces[ns]
	return l, ok
}

// ErrNoDynamic is returned by Inspect when CSI support is on without a
// dynamic client.
var ErrNoDynamic = errors.New("inspecting with CSI support needs a dynamic client")

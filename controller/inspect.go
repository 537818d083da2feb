package controller

import (
	"errors"
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Inspection is what one sync of a workload would decide, computed by the
// controller's own code (watchedSet, evidence, the record, storm control)
// from objects read by someone else, writing nothing. It is what
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
	// Watched lists the resources the workload watches, sorted.
	Watched []WatchedResource
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
// the resource selector as the controller's watches would be. cs is only
// used to build (never run) informers and may be nil.
func Inspect(cs kubernetes.Interface, o Options, v workload.View, objs []any) (Inspection, error) {
	o = inspectDefaults(o)
	if o.CSI && o.Dynamic == nil {
		return Inspection{}, ErrNoDynamic
	}
	ns := v.Object.GetNamespace()
	c := &Controller{o: o, cs: cs, scopes: map[string]*scope{}}
	// Custom workload informers are not needed: the workload is given.
	c.o.ArgoRollouts, c.o.OpenShift = false, false
	s, err := c.newScope(ns)
	if err != nil {
		return Inspection{}, err
	}
	c.scopes[ns] = s
	var sel labels.Selector = labels.Everything()
	if o.ResourceSelector != "" {
		if sel, err = labels.Parse(o.ResourceSelector); err != nil {
			return Inspection{}, fmt.Errorf("resource selector %q: %w", o.ResourceSelector, err)
		}
	}
	if o.NamespaceSelector != nil {
		c.nsInf = informers.NewSharedInformerFactory(cs, 0).Core().V1().Namespaces().Informer()
	}
	for _, obj := range objs {
		if err := c.preload(s, sel, obj); err != nil {
			return Inspection{}, err
		}
	}

	var in Inspection
	if ok, reason := v.Reloadable(); !ok {
		in.Skip = reason
	} else if c.ignoredNamespace(ns) || !c.namespaceSelected(ns) {
		in.Skip = "namespace_not_selected"
	}
	w := annotations.Workload{Meta: v.Object.GetAnnotations(), Template: v.Template.Annotations}
	in.Interested = c.o.Names.Interested(w, c.o.AutoReloadAll)
	record, _, had, problems := appliedRecord(v)
	in.Problems = problems
	set, found := c.watchedSet(v, w, record)
	in.Problems = append(in.Problems, found...)
	in.Record, in.HasRecord = record, had
	for _, r := range c.pending(v, w, set, record, had, &in) {
		p := PendingReload{Kind: r.res.Kind, Name: r.res.Name, Change: [...]string{"changed", "created", "deleted"}[r.kind]}
		p.Container, p.NoContainer = refs.ContainerFor(&v.Template.Spec, r.res.Kind, r.res.Name, r.w.auto)
		p.NoContainer = !p.NoContainer
		in.Pending = append(in.Pending, p)
	}
	sort.Slice(in.Watched, func(i, j int) bool {
		a, b := in.Watched[i], in.Watched[j]
		return a.Kind < b.Kind || a.Kind == b.Kind && a.Name < b.Name
	})
	sort.Slice(in.Pending, func(i, j int) bool {
		a, b := in.Pending[i], in.Pending[j]
		return a.Kind < b.Kind || a.Kind == b.Kind && a.Name < b.Name
	})
	if len(in.Pending) > 0 {
		in.HeldFor = max(c.tooSoon(v), 0)
	}
	in.PausedFor = c.pauseRemaining(v)
	return in, nil
}

// pending is the sync's own decision (gatherPlanInput, then planChange)
// on v's watched set; it also fills in.Watched.
func (c *Controller) pending(v workload.View, w annotations.Workload, set map[resource]watched, record map[string]string, hadRecord bool, in *Inspection) []reload {
	pi := c.gatherPlanInput(v, w, set, record, hadRecord)
	for res, wt := range set {
		// Applied shows what the record or a marker says; a first-sight
		// verdict is not a hash that was ever applied.
		b := pi.baselines[res]
		applied, known := b.hash, b.known && b.from != fromFirstSight
		if !known {
			applied = ""
		}
		in.Watched = append(in.Watched, WatchedResource{Kind: res.Kind, Name: res.Name, Auto: wt.auto,
			Hash: wt.hash, Exists: wt.hash != "", Applied: applied, Known: known})
	}
	return planChange(pi).reloads
}

// pauseRemaining is how long the pause of a Deployment this controller
// paused still runs, as resumeIfPauseOver reads it (0 when not paused by us
// or when it is over).
func (c *Controller) pauseRemaining(v workload.View) time.Duration {
	d, ok := v.Object.(*appsv1.Deployment)
	if !ok || !d.Spec.Paused {
		return 0
	}
	at, paused := d.Annotations[c.o.Names.PausedAt]
	if !paused {
		return 0
	}
	period, err := parsePausePeriod(d.Annotations[c.o.Names.PausePeriod])
	start, terr := time.Parse(time.RFC3339, at)
	if err != nil || terr != nil {
		return 0
	}
	return max(start.Add(period).Sub(c.o.Now()), 0)
}

// preload puts obj into the cache the controller's watch of its kind would
// hold, through the same transforms.
func (c *Controller) preload(s *scope, sel labels.Selector, obj any) error {
	add := func(kind refs.Kind, o any) error {
		inf, ok := s.config[kind]
		if !ok {
			return nil // kind not watched (--resources-to-ignore, CSI off)
		}
		return inf.GetIndexer().Add(o)
	}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		if !sel.Matches(labels.Set(o.Labels)) {
			return nil
		}
		e, _ := c.stripConfig(o)
		return add(refs.ConfigMap, e)
	case *corev1.Secret:
		if !sel.Matches(labels.Set(o.Labels)) {
			return nil
		}
		e, _ := c.stripConfig(o)
		return add(refs.Secret, e)
	case *corev1.Namespace:
		if c.nsInf == nil {
			return nil
		}
		return c.nsInf.GetIndexer().Add(o)
	case *unstructured.Unstructured:
		switch o.GetKind() {
		case "SecretProviderClass":
			m, err := workload.MetaFromUnstructured(o)
			if err != nil {
				return err
			}
			return add(refs.SecretProviderClass, m)
		case "SecretProviderClassPodStatus":
			if s.spcStatuses == nil {
				return nil
			}
			st, err := spcStatusFromUnstructured(o)
			if err != nil {
				return err
			}
			return s.spcStatuses.GetIndexer().Add(st)
		}
	}
	return fmt.Errorf("inspecting: unexpected object %T", obj)
}

// inspectDefaults fills what New fills, without its requirements on
// Metrics and Recorder (Inspect records nothing).
func inspectDefaults(o Options) Options {
	if o.Strategy == "" {
		o.Strategy = EnvVars
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Names == (annotations.Names{}) {
		o.Names = annotations.Defaults()
	}
	return o
}

// ErrNoDynamic is returned by Inspect when CSI support is on without a
// dynamic client.
var ErrNoDynamic = errors.New("inspecting with CSI support needs a dynamic client")

// KindTitle is the kind as Kubernetes spells it ("ConfigMap").
func KindTitle(k refs.Kind) string { return kindTitle(k) }

// KindIgnored reports whether o turns off watching resources of kind k
// (--resources-to-ignore, CSI integration off).
func KindIgnored(o Options, k refs.Kind) bool { return (&Controller{o: o}).kindIgnored(k) }

package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/reloader-dev/reloader/controller/alerts"
	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Strategy is how a reload is made visible in the pod template.
type Strategy = decide.Strategy

const (
	// EnvVars sets STAKATER_<NAME>_CONFIGMAP|SECRET on the container that uses
	// the resource (the original's default).
	EnvVars = decide.EnvVars
	// Annotations sets reloader.stakater.com/last-reloaded-from on the pod
	// template.
	Annotations = decide.Annotations
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
	// Webhook, when set, is the original's --webhook-url mode: a change is
	// sent to it instead of rolling the workload.
	Webhook *alerts.Webhook
	// Workers is the number of concurrent syncs (default 4).
	Workers int
	// FieldManager names the controller in managedFields (default "reloader").
	FieldManager string
	Recorder     record.EventRecorder
	Metrics      *metrics.Collectors
	Logger       *slog.Logger
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// Controller is the reload engine.
type Controller struct {
	o      Options
	cs     kubernetes.Interface
	queue  workqueue.TypedRateLimitingInterface[workload.Key]
	scopes map[string]*scope // namespace ("" for cluster-wide) -> informers
	nsInf  cache.SharedIndexInformer

	// keys is the per-workload state kept between syncs (keystate.go).
	keys    keyStates
	ready   atomic.Bool
	started atomic.Bool
}

// scope holds the informers of one namespace, or of the whole cluster.
type scope struct {
	configFactory, workloadFactory informers.SharedInformerFactory
	dynamicFactory                 dynamicinformer.DynamicSharedInformerFactory
	config                         map[refs.Kind]cache.SharedIndexInformer
	workloads                      map[workload.Kind]cache.SharedIndexInformer
	// spcStatuses holds SecretProviderClassPodStatuses (CSI), indexed by
	// class: they carry what a class's mounts hold.
	spcStatuses cache.SharedIndexInformer
	// deferred are the factories of optional APIs not served yet.
	deferred map[OptionalAPI]dynamicinformer.DynamicSharedInformerFactory
}

const (
	indexRef    = "reloader/ref"    // "<ns>/<kind>/<name>" of each resource the template uses
	indexNamed  = "reloader/named"  // "<ns>/<kind>" when the workload names resources of kind by pattern
	indexSearch = "reloader/search" // "<ns>" when the workload opted into search/match
)

// New builds the controller and its informers; Start runs them.
func New(cs kubernetes.Interface, o Options) (*Controller, error) {
	if o.Strategy == "" {
		o.Strategy = EnvVars
	}
	if o.Strategy != EnvVars && o.Strategy != Annotations {
		return nil, fmt.Errorf("reload strategy %q: want %q or %q", o.Strategy, EnvVars, Annotations)
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.FieldManager == "" {
		o.FieldManager = "reloader"
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
	if o.Names == (annotations.Names{}) {
		o.Names = annotations.Defaults()
	}
	if o.Metrics == nil || o.Recorder == nil {
		return nil, errors.New("controller options: Metrics and Recorder are required")
	}
	if (o.ArgoRollouts || o.OpenShift || o.CSI) && o.Dynamic == nil {
		return nil, errors.New("controller options: Argo Rollouts, OpenShift and CSI support need a dynamic client")
	}
	c := &Controller{
		o:  o,
		cs: cs,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[workload.Key](),
			workqueue.TypedRateLimitingQueueConfig[workload.Key]{Name: "reloader", MetricsProvider: depthOnly{o.Metrics.QueueDepth}}),
		scopes: map[string]*scope{},
	}
	namespaces := o.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	for _, ns := range namespaces {
		if _, dup := c.scopes[ns]; dup {
			continue
		}
		s, err := c.newScope(ns)
		if err != nil {
			return nil, err
		}
		c.scopes[ns] = s
	}
	if o.NamespaceSelector != nil {
		f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(stripMeta))
		c.nsInf = f.Core().V1().Namespaces().Informer()
		if _, err := c.nsInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) { c.namespaceChanged(obj) },
			UpdateFunc: func(old, cur any) {
				if !labels.Equals(old.(*corev1.Namespace).Labels, cur.(*corev1.Namespace).Labels) {
					c.namespaceChanged(cur)
				}
			},
		}); err != nil {
			return nil, fmt.Errorf("watching namespaces: %w", err)
		}
	}
	return c, nil
}

func (c *Controller) newScope(ns string) (*scope, error) {
	s := &scope{config: map[refs.Kind]cache.SharedIndexInformer{}, workloads: map[workload.Kind]cache.SharedIndexInformer{}}
	s.configFactory = informers.NewSharedInformerFactoryWithOptions(c.cs, 0,
		informers.WithNamespace(ns),
		informers.WithTransform(c.stripConfig),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = c.o.ResourceSelector }))
	s.workloadFactory = informers.NewSharedInformerFactoryWithOptions(c.cs, 0,
		informers.WithNamespace(ns),
		informers.WithTransform(workload.Strip))
	if !c.o.IgnoreConfigMaps {
		s.config[refs.ConfigMap] = s.configFactory.Core().V1().ConfigMaps().Informer()
	}
	if !c.o.IgnoreSecrets {
		s.config[refs.Secret] = s.configFactory.Core().V1().Secrets().Informer()
	}
	if c.o.Dynamic != nil {
		s.dynamicFactory = dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.o.Dynamic, 0, ns, nil)
	}
	if c.o.CSI {
		if err := c.addCSI(s, c.deferredFactory(s, ns, CSIAPI)); err != nil {
			return nil, err
		}
	}
	for kind, inf := range s.config {
		if kind == refs.SecretProviderClass {
			continue // its own handlers, see addCSI
		}
		if _, err := inf.AddEventHandler(c.configHandler(kind)); err != nil {
			return nil, fmt.Errorf("watching %ss: %w", kind, err)
		}
	}
	kinds := workload.Kinds()
	if c.o.ArgoRollouts {
		kinds = append(kinds, workload.Rollout)
	}
	if c.o.OpenShift {
		kinds = append(kinds, workload.DeploymentConfig)
	}
	for _, kind := range kinds {
		if c.o.IgnoredKinds[kind] {
			continue
		}
		inf := workload.Informer(kind, s.workloadFactory)
		if gvr, custom := workload.GVR(kind); custom {
			f := s.dynamicFactory
			if kind == workload.Rollout {
				f = c.deferredFactory(s, ns, ArgoRolloutsAPI)
			}
			inf = f.ForResource(gvr).Informer()
			if err := inf.SetTransform(workload.CustomFromUnstructured); err != nil {
				return nil, fmt.Errorf("caching %ss: %w", kind, err)
			}
		}
		if err := inf.AddIndexers(cache.Indexers{
			indexRef:    c.indexRefs,
			indexNamed:  c.indexNamed,
			indexSearch: c.indexSearch,
		}); err != nil {
			return nil, fmt.Errorf("indexing %ss: %w", kind, err)
		}
		if kind == workload.Job {
			if err := inf.AddIndexers(cache.Indexers{indexRecord: indexRecords}); err != nil {
				return nil, fmt.Errorf("indexing Job reload records: %w", err)
			}
		}
		if _, err := inf.AddEventHandler(c.workloadHandler()); err != nil {
			return nil, fmt.Errorf("watching %ss: %w", kind, err)
		}
		s.workloads[kind] = inf
	}
	return s, nil
}

// Start runs the informers and waits for their caches. It does not reload
// anything: RunWorkers does (HA standbys start caches without workers).
func (c *Controller) Start(ctx context.Context) error {
	var synced []cache.InformerSynced
	for _, s := range c.scopes {
		s.configFactory.Start(ctx.Done())
		s.workloadFactory.Start(ctx.Done())
		if s.dynamicFactory != nil {
			s.dynamicFactory.Start(ctx.Done())
		}
		for _, inf := range c.informersOf(s) {
			if !c.deferredInformer(s, inf) {
				synced = append(synced, inf.HasSynced)
			}
		}
	}
	c.announceUnavailable()
	if c.nsInf != nil {
		go c.nsInf.Run(ctx.Done())
		synced = append(synced, c.nsInf.HasSynced)
	}
	c.started.Store(true)
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("waiting for informer caches: %w", ctx.Err())
	}
	c.ready.Store(true)
	c.o.Metrics.CacheSynced.Set(1)
	for api := range c.o.Unavailable {
		go c.awaitAPI(ctx, api)
	}
	c.o.Logger.Info("caches synced", "scopes", len(c.scopes))
	return nil
}

// Ready reports whether every cache has synced.
func (c *Controller) Ready() bool { return c.ready.Load() }

// RunWorkers processes the queue until ctx ends, then drains and returns.
func (c *Controller) RunWorkers(ctx context.Context) {
	defer utilruntime.HandleCrash()
	var wg sync.WaitGroup
	for i := 0; i < c.o.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wait.UntilWithContext(ctx, c.worker, time.Second)
		}()
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
}

func (c *Controller) worker(ctx context.Context) {
	for c.processNext(ctx) {
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	start := c.o.Now()
	if t, ok := c.keys.onTaken(key); ok {
		c.o.Metrics.QueueLatency.Observe(start.Sub(t).Seconds())
	}
	out, err := c.sync(ctx, key)
	c.keys.onSynced(key, out, err)
	switch {
	case err == nil:
		c.o.Metrics.Syncs.WithLabelValues("success").Inc()
		c.queue.Forget(key)
		if out.requeueAfter > 0 {
			c.queue.AddAfter(key, out.requeueAfter)
		}
		// As in the original, a reconcile is the handling of a change: syncs
		// that find the workload up to date (the echo of its own patch, a
		// status update) are not counted.
		if out.reloaded {
			c.o.Metrics.RecordReconcile(metrics.ResultSuccess, c.o.Now().Sub(start))
		}
	case apierrors.IsConflict(err):
		// A stale cache: retry once it has caught up; not an error worth a
		// log nor a failed reconcile (the original retries conflicts inside
		// one reconcile).
		c.o.Metrics.Syncs.WithLabelValues("requeue").Inc()
		c.o.Metrics.RetriesTotal.Inc()
		c.queue.AddRateLimited(key)
	default:
		c.o.Metrics.Syncs.WithLabelValues("error").Inc()
		c.o.Metrics.RetriesTotal.Inc()
		c.o.Metrics.ErrorsTotal.WithLabelValues(metrics.ErrorHandler).Inc()
		c.o.Metrics.RecordReconcile(metrics.ResultError, c.o.Now().Sub(start))
		c.o.Logger.Error("sync failed; will retry", "workload", key.String(), "retries", c.queue.NumRequeues(key), "error", err)
		c.queue.AddRateLimited(key)
	}
	return true
}

// enqueue adds a workload key, remembering when its first pending event came
// (for reloader_action_latency_seconds).
func (c *Controller) enqueue(key workload.Key) {
	c.keys.onEvent(key, c.o.Now())
	c.queue.Add(key)
	c.o.Metrics.QueueAdds.Inc()
}

func (c *Controller) ignoredNamespace(ns string) bool { return c.decideOptions().NamespaceIgnored(ns) }

// namespaceSelected applies the namespace selector from the namespace cache.
func (c *Controller) namespaceSelected(ns string) bool {
	if c.o.NamespaceSelector == nil {
		return true
	}
	l, ok := cacheReader{c}.NamespaceLabels(ns)
	return ok && c.o.NamespaceSelector.Matches(labels.Set(l))
}

func (c *Controller) scopeFor(ns string) *scope {
	if s, ok := c.scopes[metav1.NamespaceAll]; ok {
		return s
	}
	return c.scopes[ns]
}

// ---- event handlers: they only enqueue keys ----

func (c *Controller) workloadHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			v, err := workload.ViewOf(obj)
			if err != nil {
				return
			}
			if !c.ignoredNamespace(v.Object.GetNamespace()) {
				var b *decide.Birth
				if !isInInitialList {
					b = &decide.Birth{UID: v.Object.GetUID(), ResourceVersion: v.Object.GetResourceVersion()}
				}
				// Before the enqueue: the sync this Add asks for finds it.
				c.keys.onAdd(v.Key(), v.Object.GetUID(), b)
				c.enqueue(v.Key())
			}
		},
		UpdateFunc: func(old, cur any) {
			o, err1 := workload.ViewOf(old)
			n, err2 := workload.ViewOf(cur)
			if err1 != nil || err2 != nil || c.ignoredNamespace(n.Object.GetNamespace()) {
				return
			}
			// Status-only updates (the bulk of workload traffic) cannot change
			// what the workload uses or what was applied to it.
			if o.Object.GetGeneration() == n.Object.GetGeneration() &&
				mapsEqual(o.Object.GetAnnotations(), n.Object.GetAnnotations()) &&
				o.Object.GetDeletionTimestamp().Equal(n.Object.GetDeletionTimestamp()) {
				return
			}
			c.enqueue(n.Key())
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if v, err := workload.ViewOf(obj); err == nil {
				c.keys.onDeleted(v.Key(), v.Object.GetUID())
			}
		},
	}
}

// configHandler enqueues the workloads a ConfigMap or Secret event concerns.
// Its metrics count events as the original does: every event is received;
// an update (an add with --reload-on-create, a delete with
// --reload-on-delete) in an ignored or unselected namespace is skipped; an
// update without a data change is a skipped reconcile; any other is
// processed, scanning the namespace's workloads.
func (c *Controller) configHandler(kind refs.Kind) cache.ResourceEventHandler {
	resourceType := "configmaps"
	if kind == refs.Secret {
		resourceType = "secrets"
	}
	counted := func(obj metav1.Object, enabled bool) bool {
		if !enabled || !c.ready.Load() {
			return false // the initial list, or an event type the user did not ask to act on
		}
		if c.ignoredNamespace(obj.GetNamespace()) || !c.namespaceSelected(obj.GetNamespace()) {
			c.o.Metrics.RecordSkipped(metrics.SkipIgnored)
			return false
		}
		return true
	}
	handle := func(obj metav1.Object, count, searchToo bool) {
		n := c.configChangedName(kind, obj.GetNamespace(), obj.GetName(), searchToo)
		if !count {
			return
		}
		c.o.Metrics.EventsProcessed.WithLabelValues(metrics.EventUnknown, resourceType, metrics.ResultSuccess).Inc()
		c.recordScan(obj.GetNamespace())
		if n == 0 {
			// Nothing uses it: handled here. Otherwise each workload's sync
			// is the reconcile.
			c.o.Metrics.RecordReconcile(metrics.ResultSuccess, 0)
		}
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			c.o.Metrics.EventsReceived.WithLabelValues("add", resourceType).Inc()
			m := metaOf(obj)
			if !isInInitialList {
				c.reportUnnamed(kind, m, "created")
			}
			handle(m, counted(m, c.o.ReloadOnCreate), m.GetAnnotations()[c.o.Names.Match] != "")
		},
		UpdateFunc: func(old, cur any) {
			c.o.Metrics.EventsReceived.WithLabelValues("update", resourceType).Inc()
			o, n := metaOf(old), metaOf(cur)
			count := counted(n, true)
			if cachedHash(old) == cachedHash(cur) && !c.triggerAnnotationsChanged(o, n) {
				// A label-only or no-op update: nothing a workload uses changed.
				if count {
					c.o.Metrics.RecordReconcile(metrics.ResultSkipped, 0)
					c.o.Metrics.RecordSkipped(metrics.SkipNoDataChange)
					c.o.Metrics.EventsProcessed.WithLabelValues(metrics.EventUnknown, resourceType, metrics.ResultSuccess).Inc()
				}
				return
			}
			if cachedHash(old) != cachedHash(cur) {
				c.reportUnnamed(kind, n, "changed")
			}
			handle(n, count, n.GetAnnotations()[c.o.Names.Match] != "" || o.GetAnnotations()[c.o.Names.Match] != "")
		},
		DeleteFunc: func(obj any) {
			c.o.Metrics.EventsReceived.WithLabelValues("delete", resourceType).Inc()
			m := metaOf(obj)
			c.reportUnnamed(kind, m, "deleted")
			handle(m, counted(m, c.o.ReloadOnDelete), m.GetAnnotations()[c.o.Names.Match] != "")
		},
	}
}

// recordScan counts the workloads of each kind in ns, as the original lists
// them for every change (reloader_workloads_scanned_total), and creates the
// matched series it adds 0 to.
func (c *Controller) recordScan(ns string) {
	s := c.scopeFor(ns)
	if s == nil {
		return
	}
	for kind, inf := range s.workloads {
		objs, _ := inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
		c.o.Metrics.WorkloadsScanned.WithLabelValues(string(kind)).Add(float64(len(objs)))
		c.o.Metrics.WorkloadsMatched.WithLabelValues(string(kind)).Add(0)
	}
}

func (c *Controller) triggerAnnotationsChanged(o, n metav1.Object) bool {
	for _, k := range []string{c.o.Names.Ignore, c.o.Names.Match} {
		if o.GetAnnotations()[k] != n.GetAnnotations()[k] {
			return true
		}
	}
	return false
}

// configChanged enqueues every workload that may watch the resource: those
// using it, those naming resources of its kind by pattern, and (searchToo,
// when the resource carries or carried the match annotation) those that search.
func (c *Controller) configChanged(kind refs.Kind, obj metav1.Object, searchToo bool) {
	c.configChangedName(kind, obj.GetNamespace(), obj.GetName(), searchToo)
}

// configChangedName returns how many workloads it enqueued.
func (c *Controller) configChangedName(kind refs.Kind, ns, name string, searchToo bool) int {
	if c.ignoredNamespace(ns) {
		return 0
	}
	s := c.scopeFor(ns)
	if s == nil {
		return 0
	}
	n := 0
	for wk, inf := range s.workloads {
		idx := inf.GetIndexer()
		var objs []any
		for _, q := range [][2]string{{indexRef, ns + "/" + string(kind) + "/" + name}, {indexNamed, ns + "/" + string(kind)}} {
			found, err := idx.ByIndex(q[0], q[1])
			if err == nil {
				objs = append(objs, found...)
			}
		}
		if searchToo {
			if found, err := idx.ByIndex(indexSearch, ns); err == nil {
				objs = append(objs, found...)
			}
		}
		for _, o := range objs {
			m := o.(metav1.Object)
			c.enqueue(workload.Key{Kind: wk, Namespace: m.GetNamespace(), Name: m.GetName()})
			n++
		}
	}
	return n
}

func (c *Controller) namespaceChanged(obj any) {
	ns := obj.(*corev1.Namespace).Name
	s := c.scopeFor(ns)
	if s == nil {
		return
	}
	for wk, inf := range s.workloads {
		objs, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
		if err != nil {
			continue
		}
		for _, o := range objs {
			c.enqueue(workload.Key{Kind: wk, Namespace: ns, Name: o.(metav1.Object).GetName()})
		}
	}
}

// ---- indexers ----

func (c *Controller) indexRefs(obj any) ([]string, error) {
	v, err := workload.ViewOf(obj)
	if err != nil {
		return nil, nil
	}
	found := refs.Find(&v.Template.Spec)
	out := make([]string, 0, len(found))
	for _, r := range found {
		out = append(out, v.Object.GetNamespace()+"/"+string(r.Kind)+"/"+r.Name)
	}
	return out, nil
}

func (c *Controller) indexNamed(obj any) ([]string, error) {
	v, err := workload.ViewOf(obj)
	if err != nil {
		return nil, nil
	}
	w := annotations.Workload{Meta: v.Object.GetAnnotations(), Template: v.Template.Annotations}
	var out []string
	for _, k := range []refs.Kind{refs.ConfigMap, refs.Secret, refs.SecretProviderClass} {
		if c.o.Names.HasNamedReload(w, k) {
			out = append(out, v.Object.GetNamespace()+"/"+string(k))
		}
	}
	return out, nil
}

func (c *Controller) indexSearch(obj any) ([]string, error) {
	v, err := workload.ViewOf(obj)
	if err != nil {
		return nil, nil
	}
	if c.o.Names.Searches(annotations.Workload{Meta: v.Object.GetAnnotations(), Template: v.Template.Annotations}) {
		return []string{v.Object.GetNamespace()}, nil
	}
	return nil, nil
}

// ---- lookups ----

func (c *Controller) getWorkload(key workload.Key) (workload.View, bool, error) {
	s := c.scopeFor(key.Namespace)
	if s == nil {
		return workload.View{}, false, nil
	}
	inf, ok := s.workloads[key.Kind]
	if !ok {
		return workload.View{}, false, nil
	}
	obj, exists, err := inf.GetIndexer().GetByKey(key.Namespace + "/" + key.Name)
	if err != nil || !exists {
		return workload.View{}, false, err
	}
	v, err := workload.ViewOf(obj)
	return v, err == nil, err
}

// config returns the cached (data-stripped) resource.
func (c *Controller) config(kind refs.Kind, ns, name string) (any, bool) {
	s := c.scopeFor(ns)
	if s == nil {
		return nil, false
	}
	inf, ok := s.config[kind]
	if !ok {
		return nil, false
	}
	obj, exists, err := inf.GetIndexer().GetByKey(ns + "/" + name)
	if err != nil || !exists {
		return nil, false
	}
	return obj, true
}

// cacheReader is the decision's view of the informer caches and the
// per-key state (decide.Reader).
type cacheReader struct{ c *Controller }

var _ decide.Reader = cacheReader{}

// Resource reads a resource's state from the caches.
func (r cacheReader) Resource(kind refs.Kind, ns, name string) decide.State {
	obj, ok := r.c.config(kind, ns, name)
	return stateOf(kind, obj, ok, func() (string, bool) { return r.c.spcHash(ns, name) })
}

// stateOf is the state of a cached resource obj (ok: it is cached). A
// SecretProviderClass's content is what its mounts report (spcHash); its own
// object only carries annotations.
func stateOf(kind refs.Kind, obj any, ok bool, spcHash func() (string, bool)) decide.State {
	var st decide.State
	if ok {
		st.Annotations = metaOf(obj).GetAnnotations()
	}
	if kind == refs.SecretProviderClass {
		st.Hash, st.Exists = spcHash()
		return st
	}
	if e, isEntry := obj.(*configEntry); ok && isEntry {
		st.Hash, st.Exists = e.hash, true
		st.ResourceVersion, st.Created, st.Written = e.resourceVersion, e.created, e.written
	}
	return st
}

func (r cacheReader) Names(kind refs.Kind, ns string) []string {
	s := r.c.scopeFor(ns)
	if s == nil {
		return nil
	}
	inf, ok := s.config[kind]
	if !ok {
		return nil
	}
	objs, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, ns)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, metaOf(o).GetName())
	}
	return out
}

func (r cacheReader) Birth(key workload.Key) (decide.Birth, bool) {
	if b := r.c.keys.read(key).born; b != nil {
		return *b, true
	}
	return decide.Birth{}, false
}

func (r cacheReader) NamespaceLabels(ns string) (map[string]string, bool) {
	if r.c.nsInf == nil {
		return nil, false
	}
	obj, ok, err := r.c.nsInf.GetStore().GetByKey(ns)
	if err != nil || !ok {
		return nil, false
	}
	return obj.(*corev1.Namespace).Labels, true
}

// ---- cache transforms ----

// configEntry is all the cache keeps of a ConfigMap or Secret: its name,
// resourceVersion, creation and last-write times, the annotations that steer
// reloads (ignore, match) and the hash of its data. Memory therefore grows with the number of objects, not
// their size, and no value is ever held by the controller. It is smaller than
// an ObjectMeta; the informer reaches its metadata through GetObjectMeta.
type configEntry struct {
	name, namespace, resourceVersion string
	annotations                      map[string]string
	hash                             string
	created, written                 time.Time
}

// GetObjectMeta implements metav1.ObjectMetaAccessor (keys and indexes).
func (e *configEntry) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: e.name, Namespace: e.namespace, ResourceVersion: e.resourceVersion, Annotations: e.annotations}
}

// metaOf is the metadata of anything the caches hold.
func metaOf(obj any) metav1.Object {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return &metav1.ObjectMeta{}
	}
	return m
}

// stripConfig is the informer transform turning a ConfigMap or Secret into
// its configEntry before it enters the cache.
func (c *Controller) stripConfig(obj any) (any, error) { return stripConfig(c.o.Names, obj), nil }

// stripConfig keeps of a ConfigMap or Secret what the decision reads, with
// the annotations of n that steer reloads.
func stripConfig(n annotations.Names, obj any) any {
	var m metav1.Object
	var h string
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		m, h = o, hashConfigMap(o)
	case *corev1.Secret:
		m, h = o, hashSecret(o)
	default:
		return obj // already an entry, or a tombstone
	}
	e := &configEntry{name: m.GetName(), namespace: m.GetNamespace(), resourceVersion: m.GetResourceVersion(), hash: h,
		created: m.GetCreationTimestamp().Time, written: lastWrite(m)}
	for _, k := range []string{n.Ignore, n.Match} {
		if v, ok := m.GetAnnotations()[k]; ok {
			if e.annotations == nil {
				e.annotations = make(map[string]string, 2)
			}
			e.annotations[k] = v
		}
	}
	return e
}

func stripMeta(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
		if ns, ok := obj.(*corev1.Namespace); ok {
			ns.Annotations = nil
		}
	}
	return obj, nil
}

// cachedHash is the hash stripConfig kept.
func cachedHash(obj any) string {
	if e, ok := obj.(*configEntry); ok {
		return e.hash
	}
	return ""
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// eventObject returns the typed object for the event recorder.
func eventObject(v workload.View) runtime.Object {
	// Every kind's object, the custom ones included, is a runtime.Object.
	o, _ := v.Object.(runtime.Object)
	return o
}

// depthOnly gives the workqueue our depth gauge, which it moves under its
// own lock as items enter and leave it: setting the gauge from the queue's
// length after the fact raced between goroutines and could leave it above an
// empty queue. The queue's other metrics are ours already, or not kept.
type depthOnly struct{ depth prometheus.Gauge }

func (d depthOnly) NewDepthMetric(string) workqueue.GaugeMetric          { return d.depth }
func (depthOnly) NewAddsMetric(string) workqueue.CounterMetric           { return noMetric{} }
func (depthOnly) NewLatencyMetric(string) workqueue.HistogramMetric      { return noMetric{} }
func (depthOnly) NewWorkDurationMetric(string) workqueue.HistogramMetric { return noMetric{} }
func (depthOnly) NewUnfinishedWorkSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noMetric{}
}
func (depthOnly) NewLongestRunningProcessorSecondsMetric(string) workqueue.SettableGaugeMetric {
	return noMetric{}
}
func (depthOnly) NewRetriesMetric(string) workqueue.CounterMetric { return noMetric{} }

type noMetric struct{}

func (noMetric) Inc()            {}
func (noMetric) Dec()            {}
func (noMetric) Set(float64)     {}
func (noMetric) Observe(float64) {}

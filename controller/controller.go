package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/budget"
	"github.com/reloader-dev/reloader/controller/busy"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/lanes"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/rollout"
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

// Controller is the reload engine.
type Controller struct {
	o     Options
	cs    kubernetes.Interface
	queue workqueue.TypedRateLimitingInterface[workload.Key]
	// lanes orders the queue: changes ahead of adoption and retries.
	lanes *lanes.Queue[workload.Key]
	// adoptions paces adoption writes (adoption.go); busy holds them and
	// Events while reloads are written (events.go).
	adoptions *rate.Limiter
	busy      *busy.Tracker
	scopes    map[string]*scope // namespace ("" for cluster-wide) -> informers
	nsInf     cache.SharedIndexInformer

	// keys is the per-workload state kept between syncs (keystate.go).
	keys keyStates
	// deferred is what the audit trail last reported held per workload.
	deferred deferrals
	// gate is the rollout budget; nil without one.
	gate *budget.Gate
	// budgetMu makes counting the rollouts and admitting one reload atomic.
	budgetMu sync.Mutex
	ready    atomic.Bool
	started  atomic.Bool
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

// New builds the controller and its informers; Start runs them. It is
// defaulting, validation and wiring in the order each needs the last.
func New(cs kubernetes.Interface, o Options) (*Controller, error) {
	if o.Strategy == "" {
		o.Strategy = EnvVars
	}
	if o.Strategy != EnvVars && o.Strategy != Annotations {
		return nil, fmt.Errorf("reload strategy %q: want %q or %q", o.Strategy, EnvVars, Annotations)
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Hash == "" {
		o.Hash = hash.SHA1
	}
	if err := o.Hash.Usable(); err != nil {
		return nil, fmt.Errorf("controller options: %w", err)
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
	c := &Controller{o: o, cs: cs, scopes: map[string]*scope{}, adoptions: newAdoptionLimiter(o.AdoptionRate), busy: busy.New(busy.Options{})}
	c.queue, c.lanes = newQueue(o.Metrics.QueueDepth)
	if o.Budget.Enabled() {
		c.gate = budget.New(o.Budget)
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

// newScope builds the informers of one namespace (or of the cluster): the
// config watches, then each workload kind's informer with its indexes and
// handler. It stays whole so the watches a scope holds are listed in one
// place.
func (c *Controller) newScope(ns string) (*scope, error) {
	s := &scope{config: map[refs.Kind]cache.SharedIndexInformer{}, workloads: map[workload.Kind]cache.SharedIndexInformer{}}
	watch := c.cs
	if ns == metav1.NamespaceAll && c.o.WatchClient != nil {
		watch = c.o.WatchClient
	}
	s.configFactory = informers.NewSharedInformerFactoryWithOptions(watch, 0,
		informers.WithNamespace(ns),
		informers.WithTransform(c.stripConfig),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = c.o.ResourceSelector }))
	s.workloadFactory = informers.NewSharedInformerFactoryWithOptions(watch, 0,
		informers.WithNamespace(ns),
		informers.WithTransform(c.stripWorkload))
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
		inf := rollout.Informer(kind, s.workloadFactory)
		if gvr, custom := workload.GVR(kind); custom {
			f := s.dynamicFactory
			if api, optional := workloadAPIs[kind]; optional {
				f = c.deferredFactory(s, ns, api)
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
		if kind.Has(workload.Recreates) {
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
			// A held reload (a window, the budget, a pause): due when it
			// comes back, so it goes ahead of background work then.
			c.lanes.Urgent(key)
			c.queue.AddAfter(key, out.requeueAfter)
		}
		if out.recordAfter > 0 {
			c.queue.AddAfter(key, out.recordAfter) // background work
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
		c.lanes.Urgent(key) // a write lost to a race, not a failure: still a change
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

// Package cache is what the controller knows of the cluster: the informers
// of the workloads and of the ConfigMaps, Secrets and SecretProviderClasses
// they use, reduced on the way in to what a decision reads (hashes, never
// data), their indexes (which workloads a resource concerns), and the
// decision's Reader over them.
//
// As in kubernetes/sample-controller, the informers are built by the caller
// (New) and handed to the controller, which adds its handlers; Inspect
// (`reloader explain`) and the controller's unit tests build the same caches
// from objects they were given (FromObjects), so every reader of a cache
// reads it through the same transforms and indexes.
package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/rollout"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Options say what is cached and how it is reduced.
type Options struct {
	// Names are the annotation names that steer reloads: the resources keep
	// ignore and match, the workload indexes read the rest.
	Names annotations.Names
	// Hash and KeyDigests reduce a ConfigMap's or Secret's content to its
	// hash and per-key digests as it enters the cache.
	Hash       hash.Algorithm
	KeyDigests hash.KeyDigester
	// Namespaces are the scopes watched, each with namespaced informers
	// (empty: the whole cluster).
	Namespaces []string
	// ResourceSelector is the label selector of the ConfigMap and Secret
	// watches, applied by the apiserver.
	ResourceSelector string
	// Namespaces' labels are cached when NamespaceLabels is set (the
	// namespace selector reads them).
	NamespaceLabels bool
	// IgnoreConfigMaps and IgnoreSecrets leave that kind unwatched; CSI
	// watches SecretProviderClasses and their pods' mount statuses.
	IgnoreConfigMaps, IgnoreSecrets, CSI bool
	// Kinds are the workload kinds cached; the custom ones are read through
	// Dynamic, the declared ones as Table says.
	Kinds   []workload.Kind
	Table   workload.Table
	Dynamic dynamic.Interface
	// Unavailable are optional APIs not served yet: their informers are
	// built but started by StartWhenServed.
	Unavailable map[OptionalAPI]bool
	// KeepStatus keeps workloads' rollout status (the rollout budget reads
	// it); otherwise status is dropped on the way in.
	KeepStatus bool
	// WatchClient, when set, serves the cluster-wide scope's watches.
	WatchClient kubernetes.Interface
	Logger      *slog.Logger
}

// Cache holds the informers of every scope watched.
type Cache struct {
	o      Options
	scopes map[string]*scope // namespace ("" for cluster-wide)
	nsInf  toolscache.SharedIndexInformer
	ns     toolscache.Store
}

// scope holds the caches of one namespace, or of the whole cluster: the
// informers (nil in a cache built from objects) and the indexes read, the
// informers' own or built from objects.
type scope struct {
	configFactory, workloadFactory informers.SharedInformerFactory
	dynamicFactory                 dynamicinformer.DynamicSharedInformerFactory
	// deferred are the factories of optional APIs not served yet.
	deferred  map[OptionalAPI]dynamicinformer.DynamicSharedInformerFactory
	config    map[refs.Kind]toolscache.SharedIndexInformer
	workloads map[workload.Kind]toolscache.SharedIndexInformer
	// statuses are SecretProviderClassPodStatuses, indexed by class: what a
	// class's mounts hold.
	statuses toolscache.SharedIndexInformer

	configIdx   map[refs.Kind]toolscache.Indexer
	workloadIdx map[workload.Kind]toolscache.Indexer
	statusIdx   toolscache.Indexer
}

// New builds the informers of every scope; nothing runs until Start.
func New(cs kubernetes.Interface, o Options) (*Cache, error) {
	if o.CSI && o.Dynamic == nil {
		return nil, errors.New("caching SecretProviderClasses needs a dynamic client")
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	c := &Cache{o: o, scopes: map[string]*scope{}}
	namespaces := o.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	for _, ns := range namespaces {
		if _, dup := c.scopes[ns]; dup {
			continue
		}
		s, err := c.newScope(cs, ns)
		if err != nil {
			return nil, err
		}
		c.scopes[ns] = s
	}
	if o.NamespaceLabels {
		f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTransform(stripMeta))
		c.nsInf = f.Core().V1().Namespaces().Informer()
		c.ns = c.nsInf.GetStore()
	}
	return c, nil
}

// newScope builds the informers of one namespace (or of the cluster): the
// config watches, then each workload kind's informer with its indexes.
func (c *Cache) newScope(cs kubernetes.Interface, ns string) (*scope, error) {
	s := &scope{config: map[refs.Kind]toolscache.SharedIndexInformer{}, workloads: map[workload.Kind]toolscache.SharedIndexInformer{}}
	watch := cs
	if ns == metav1.NamespaceAll && c.o.WatchClient != nil {
		watch = c.o.WatchClient
	}
	o := c.o
	s.configFactory = informers.NewSharedInformerFactoryWithOptions(watch, 0,
		informers.WithNamespace(ns),
		informers.WithTransform(func(obj any) (any, error) { return stripConfig(o.Names, o.Hash, o.KeyDigests, obj), nil }),
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = o.ResourceSelector }))
	s.workloadFactory = informers.NewSharedInformerFactoryWithOptions(watch, 0,
		informers.WithNamespace(ns), informers.WithTransform(stripWorkload(o.KeepStatus)))
	if !o.IgnoreConfigMaps {
		s.config[refs.ConfigMap] = s.configFactory.Core().V1().ConfigMaps().Informer()
	}
	if !o.IgnoreSecrets {
		s.config[refs.Secret] = s.configFactory.Core().V1().Secrets().Informer()
	}
	if o.Dynamic != nil {
		s.dynamicFactory = dynamicinformer.NewFilteredDynamicSharedInformerFactory(o.Dynamic, 0, ns, nil)
	}
	if o.CSI {
		if err := c.addCSI(s, c.deferredFactory(s, ns, CSIAPI)); err != nil {
			return nil, err
		}
	}
	for _, kind := range o.Kinds {
		inf := rollout.Informer(kind, s.workloadFactory)
		if gvr, custom := o.Table.GVR(kind); custom {
			if o.Dynamic == nil {
				return nil, fmt.Errorf("caching %ss needs a dynamic client", kind)
			}
			f := s.dynamicFactory
			if api, optional := c.workloadAPI(kind); optional {
				f = c.deferredFactory(s, ns, api)
			}
			inf = f.ForResource(gvr).Informer()
			if err := inf.SetTransform(c.customTransform(s, kind)); err != nil {
				return nil, fmt.Errorf("caching %ss: %w", kind, err)
			}
			if err := inf.AddIndexers(workloadRefIndexers(kind)); err != nil {
				return nil, fmt.Errorf("indexing %ss: %w", kind, err)
			}
		}
		if err := inf.AddIndexers(workloadIndexers(o.Names, kind)); err != nil {
			return nil, fmt.Errorf("indexing %ss: %w", kind, err)
		}
		s.workloads[kind] = inf
	}
	s.index()
	return s, nil
}

// index points the scope's indexes at its informers' own.
func (s *scope) index() {
	s.configIdx = map[refs.Kind]toolscache.Indexer{}
	for k, inf := range s.config {
		s.configIdx[k] = inf.GetIndexer()
	}
	s.workloadIdx = map[workload.Kind]toolscache.Indexer{}
	for k, inf := range s.workloads {
		s.workloadIdx[k] = inf.GetIndexer()
	}
	if s.statuses != nil {
		s.statusIdx = s.statuses.GetIndexer()
	}
}

// Handlers are the controller's event handlers, one per kind of object
// cached; New's informers get them through AddHandlers.
type Handlers struct {
	// Workload handles every workload kind's events.
	Workload func(workload.Kind) toolscache.ResourceEventHandler
	// Config handles ConfigMaps', Secrets' and SecretProviderClasses' own
	// events (their objects as the cache keeps them: MetaOf, HashOf).
	Config func(refs.Kind) toolscache.ResourceEventHandler
	// ClassContent is told when what a SecretProviderClass's mounts hold in
	// namespace ns may have changed.
	ClassContent func(ns, class string)
	// Namespace handles Namespaces' events (only cached with
	// Options.NamespaceLabels).
	Namespace toolscache.ResourceEventHandler
}

// AddHandlers adds h to every informer.
func (c *Cache) AddHandlers(h Handlers) error {
	for _, s := range c.scopes {
		for kind, inf := range s.config {
			if _, err := inf.AddEventHandler(h.Config(kind)); err != nil {
				return fmt.Errorf("watching %ss: %w", kind, err)
			}
		}
		if s.statuses != nil {
			if _, err := s.statuses.AddEventHandler(statusHandler(h.ClassContent)); err != nil {
				return fmt.Errorf("watching SecretProviderClassPodStatuses: %w", err)
			}
		}
		for kind, inf := range s.workloads {
			if _, err := inf.AddEventHandler(h.Workload(kind)); err != nil {
				return fmt.Errorf("watching %ss: %w", kind, err)
			}
		}
	}
	if c.nsInf != nil && h.Namespace != nil {
		if _, err := c.nsInf.AddEventHandler(h.Namespace); err != nil {
			return fmt.Errorf("watching namespaces: %w", err)
		}
	}
	return nil
}

// Start runs the informers of the APIs served and waits for their caches.
func (c *Cache) Start(ctx context.Context) error {
	var synced []toolscache.InformerSynced
	for _, s := range c.scopes {
		s.configFactory.Start(ctx.Done())
		s.workloadFactory.Start(ctx.Done())
		if s.dynamicFactory != nil {
			s.dynamicFactory.Start(ctx.Done())
		}
		for _, inf := range s.informers() {
			if !c.deferredInformer(s, inf) {
				synced = append(synced, inf.HasSynced)
			}
		}
	}
	if c.nsInf != nil {
		go c.nsInf.Run(ctx.Done())
		synced = append(synced, c.nsInf.HasSynced)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("waiting for informer caches: %w", ctx.Err())
	}
	return nil
}

// Scopes is the number of scopes watched.
func (c *Cache) Scopes() int { return len(c.scopes) }

// informers lists every informer of a scope.
func (s *scope) informers() []toolscache.SharedIndexInformer {
	var out []toolscache.SharedIndexInformer
	for _, inf := range s.config {
		out = append(out, inf)
	}
	for _, inf := range s.workloads {
		out = append(out, inf)
	}
	if s.statuses != nil {
		out = append(out, s.statuses)
	}
	return out
}

// NamespaceLabels reads a namespace's cached labels.
func (c *Cache) NamespaceLabels(ns string) (map[string]string, bool) {
	if c.ns == nil {
		return nil, false
	}
	obj, ok, err := c.ns.GetByKey(ns)
	if err != nil || !ok {
		return nil, false
	}
	return obj.(*corev1.Namespace).Labels, true
}

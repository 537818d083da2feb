package cache

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// FromObjects builds the cache the controller's informers would hold of objs,
// through the same transforms and indexes, without watching anything:
// `reloader explain` decides over objects it read itself, and the
// controller's unit tests over objects they made. objs may hold ConfigMaps
// and Secrets (kept when the resource selector matches them), Namespaces
// (kept with Options.NamespaceLabels), workloads of Options.Kinds (typed, or
// unstructured for the custom kinds), and with Options.CSI unstructured
// SecretProviderClasses and SecretProviderClassPodStatuses.
func FromObjects(o Options, objs []any) (*Cache, error) {
	sel := labels.Everything()
	if o.ResourceSelector != "" {
		var err error
		if sel, err = labels.Parse(o.ResourceSelector); err != nil {
			return nil, fmt.Errorf("resource selector %q: %w", o.ResourceSelector, err)
		}
	}
	s := &scope{configIdx: map[refs.Kind]toolscache.Indexer{}, workloadIdx: map[workload.Kind]toolscache.Indexer{}}
	nsIdx := toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc}
	if !o.IgnoreConfigMaps {
		s.configIdx[refs.ConfigMap] = toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, nsIdx)
	}
	if !o.IgnoreSecrets {
		s.configIdx[refs.Secret] = toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, nsIdx)
	}
	if o.CSI {
		s.configIdx[refs.SecretProviderClass] = toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, nsIdx)
		s.statusIdx = toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{indexClass: indexClasses})
	}
	for _, kind := range o.Kinds {
		ix := workloadIndexers(o.Names, kind)
		ix[toolscache.NamespaceIndex] = toolscache.MetaNamespaceIndexFunc
		s.workloadIdx[kind] = toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, ix)
	}
	c := &Cache{o: o, scopes: map[string]*scope{metav1.NamespaceAll: s}}
	if o.NamespaceLabels {
		c.ns = toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	}
	for _, obj := range objs {
		if err := c.add(s, sel, obj); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// add keeps obj as the informer of its kind would.
func (c *Cache) add(s *scope, sel labels.Selector, obj any) error {
	put := func(idx toolscache.Store, obj any) error {
		if idx == nil {
			return nil // a kind not watched
		}
		return idx.Add(obj)
	}
	switch t := obj.(type) {
	case *corev1.ConfigMap:
		if !sel.Matches(labels.Set(t.Labels)) {
			return nil
		}
		return put(s.configIdx[refs.ConfigMap], stripConfig(c.o.Names, c.o.Hash, c.o.KeyDigests, t))
	case *corev1.Secret:
		if !sel.Matches(labels.Set(t.Labels)) {
			return nil
		}
		return put(s.configIdx[refs.Secret], stripConfig(c.o.Names, c.o.Hash, c.o.KeyDigests, t))
	case *corev1.Namespace:
		if c.ns == nil {
			return nil
		}
		ns, _ := stripMeta(t.DeepCopy())
		return c.ns.Add(ns)
	case *unstructured.Unstructured:
		return c.addUnstructured(s, t)
	}
	return c.addWorkload(s, obj)
}

func (c *Cache) addUnstructured(s *scope, u *unstructured.Unstructured) error {
	switch u.GetKind() {
	case "SecretProviderClass":
		if s.statusIdx == nil {
			return nil
		}
		m, err := workload.MetaFromUnstructured(u)
		if err != nil {
			return fmt.Errorf("caching SecretProviderClass %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
		return s.configIdx[refs.SecretProviderClass].Add(m)
	case "SecretProviderClassPodStatus":
		if s.statusIdx == nil {
			return nil
		}
		st, err := spcStatusOf(c.o.Hash, u)
		if err != nil {
			return fmt.Errorf("caching SecretProviderClassPodStatus %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
		return s.statusIdx.Add(st)
	}
	obj, err := workload.CustomFromUnstructured(u)
	if err != nil {
		return fmt.Errorf("caching %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return c.addWorkload(s, obj)
}

func (c *Cache) addWorkload(s *scope, obj any) error {
	v, err := workload.ViewOf(obj)
	if err != nil {
		return fmt.Errorf("caching: unexpected object %T", obj)
	}
	idx := s.workloadIdx[v.Kind]
	if idx == nil {
		return nil
	}
	if ro, ok := obj.(runtime.Object); ok {
		obj = ro.DeepCopyObject() // the transform strips in place; the caller keeps its object
	}
	stripped, err := stripWorkload(c.o.KeepStatus)(obj)
	if err != nil {
		return fmt.Errorf("caching %s: %w", v.Key(), err)
	}
	return idx.Add(stripped)
}

package cache

import (
	"iter"
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// How the caches are read: a workload, the decision's Reader, the workloads a
// resource concerns, who changed a resource.

func (c *Cache) scopeFor(ns string) *scope {
	if s, ok := c.scopes[metav1.NamespaceAll]; ok {
		return s
	}
	return c.scopes[ns]
}

// Workload is the cached workload of key; false when it is not cached.
func (c *Cache) Workload(key workload.Key) (workload.View, bool, error) {
	s := c.scopeFor(key.Namespace)
	if s == nil || s.workloadIdx[key.Kind] == nil {
		return workload.View{}, false, nil
	}
	obj, exists, err := s.workloadIdx[key.Kind].GetByKey(key.Namespace + "/" + key.Name)
	if err != nil || !exists {
		return workload.View{}, false, err
	}
	v, err := workload.ViewOf(obj)
	return v, err == nil, err
}

// config returns the cached (data-stripped) resource.
func (c *Cache) config(kind refs.Kind, ns, name string) (any, bool) {
	s := c.scopeFor(ns)
	if s == nil || s.configIdx[kind] == nil {
		return nil, false
	}
	obj, exists, err := s.configIdx[kind].GetByKey(ns + "/" + name)
	if err != nil || !exists {
		return nil, false
	}
	return obj, true
}

// Reader is the decision's view of the caches; births are the workloads'
// creations as the controller's handlers saw them (decide.Reader.Birth).
func (c *Cache) Reader(births func(workload.Key) (decide.Birth, bool)) decide.Reader {
	return reader{c: c, births: births}
}

type reader struct {
	c      *Cache
	births func(workload.Key) (decide.Birth, bool)
}

func (r reader) Resource(kind refs.Kind, ns, name string) decide.State {
	return r.c.Resource(kind, ns, name)
}

func (r reader) Names(kind refs.Kind, ns string) []string {
	s := r.c.scopeFor(ns)
	if s == nil || s.configIdx[kind] == nil {
		return nil
	}
	objs, err := s.configIdx[kind].ByIndex(toolscache.NamespaceIndex, ns)
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, MetaOf(o).GetName())
	}
	return out
}

func (r reader) Birth(key workload.Key) (decide.Birth, bool) {
	if r.births == nil {
		return decide.Birth{}, false
	}
	return r.births(key)
}

func (r reader) NamespaceLabels(ns string) (map[string]string, bool) { return r.c.NamespaceLabels(ns) }

// Resource is the state of a cached ConfigMap, Secret or
// SecretProviderClass as the decision reads it.
func (c *Cache) Resource(kind refs.Kind, ns, name string) decide.State {
	obj, ok := c.config(kind, ns, name)
	return stateOf(kind, obj, ok, func() (string, bool) {
		if s := c.scopeFor(ns); s != nil {
			return s.classHash(ns, name)
		}
		return "", false
	})
}

// ChangedBy is the write that made the cached resource's current version,
// or nil when the cache does not tell (no managedFields, or the cache has
// moved past rv, so its writer is not the one of the change decided on).
func (c *Cache) ChangedBy(kind refs.Kind, ns, name, rv string) *audit.Writer {
	obj, ok := c.config(kind, ns, name)
	if !ok {
		return nil
	}
	e, isEntry := obj.(*configEntry)
	if !isEntry || e.writer == "" || (rv != "" && e.resourceVersion != rv) {
		return nil
	}
	return &audit.Writer{Manager: e.writer, Operation: e.writeOp, Time: e.written}
}

// Watchers yields the keys of the workloads that may watch a resource:
// those using it, those naming resources of its kind by pattern, and
// (searchToo, when the resource carries or carried the match annotation)
// those that search. A workload may come more than once.
func (c *Cache) Watchers(kind refs.Kind, ns, name string, searchToo bool) iter.Seq[workload.Key] {
	return func(yield func(workload.Key) bool) {
		s := c.scopeFor(ns)
		if s == nil {
			return
		}
		queries := [][2]string{{indexRef, ns + "/" + string(kind) + "/" + name}, {indexNamed, ns + "/" + string(kind)}}
		if searchToo {
			queries = append(queries, [2]string{indexSearch, ns})
		}
		for wk, idx := range s.workloadIdx {
			for _, q := range queries {
				found, err := idx.ByIndex(q[0], q[1])
				if err != nil {
					continue
				}
				for _, o := range found {
					if !yield(workload.Key{Kind: wk, Namespace: ns, Name: MetaOf(o).GetName()}) ||
						!s.referrers(wk, ns, MetaOf(o).GetName(), yield) {
						return
					}
				}
			}
		}
	}
}

// Users yields the cached workloads whose pod spec uses the resource.
func (c *Cache) Users(kind refs.Kind, ns, name string) iter.Seq[workload.View] {
	return func(yield func(workload.View) bool) {
		s := c.scopeFor(ns)
		if s == nil {
			return
		}
		for _, idx := range s.workloadIdx {
			objs, err := idx.ByIndex(indexRef, ns+"/"+string(kind)+"/"+name)
			if err != nil {
				continue
			}
			for _, o := range objs {
				if v, err := workload.ViewOf(o); err == nil && !yield(v) {
					return
				}
			}
		}
	}
}

// InNamespace lists the keys of every cached workload in ns.
func (c *Cache) InNamespace(ns string) []workload.Key {
	s := c.scopeFor(ns)
	if s == nil {
		return nil
	}
	var keys []workload.Key
	for wk, idx := range s.workloadIdx {
		objs, _ := idx.ByIndex(toolscache.NamespaceIndex, ns)
		for _, o := range objs {
			keys = append(keys, workload.Key{Kind: wk, Namespace: ns, Name: MetaOf(o).GetName()})
		}
	}
	return keys
}

// Counts counts the cached workloads of each kind in ns. It is called for
// every change (the scanned-workloads metric), so it builds no keys.
func (c *Cache) Counts(ns string) map[workload.Kind]int {
	s := c.scopeFor(ns)
	if s == nil {
		return nil
	}
	counts := make(map[workload.Kind]int, len(s.workloadIdx))
	for wk, idx := range s.workloadIdx {
		objs, _ := idx.ByIndex(toolscache.NamespaceIndex, ns)
		counts[wk] = len(objs)
	}
	return counts
}

// All yields every cached workload of the kinds keep accepts.
func (c *Cache) All(keep func(workload.Kind) bool) iter.Seq[workload.View] {
	return func(yield func(workload.View) bool) {
		for _, s := range c.scopes {
			for kind, idx := range s.workloadIdx {
				if !keep(kind) {
					continue
				}
				for _, obj := range idx.List() {
					if v, err := workload.ViewOf(obj); err == nil && !yield(v) {
						return
					}
				}
			}
		}
	}
}

// JobRecords are the records of reloads of the Job named target (newest
// first) and the Job itself when it is cached (nil when not).
func (c *Cache) JobRecords(kind workload.Kind, ns, target string) ([]*batchv1.Job, metav1.Object, error) {
	s := c.scopeFor(ns)
	if s == nil || s.workloadIdx[kind] == nil {
		return nil, nil, nil
	}
	idx := s.workloadIdx[kind]
	found, err := idx.ByIndex(indexRecord, ns+"/"+target)
	if err != nil || len(found) == 0 {
		return nil, nil, err
	}
	recs := make([]*batchv1.Job, 0, len(found))
	for _, o := range found {
		recs = append(recs, o.(*batchv1.Job))
	}
	// Newest first: the latest decision is the one to replay.
	sort.Slice(recs, func(i, j int) bool { return recs[j].CreationTimestamp.Before(&recs[i].CreationTimestamp) })
	var current metav1.Object
	if obj, ok, err := idx.GetByKey(ns + "/" + target); err == nil && ok {
		current = obj.(metav1.Object)
	}
	return recs, current, nil
}

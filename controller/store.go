package controller

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// What the informer caches hold and how it is read: the workload views, the
// configEntry each ConfigMap and Secret is reduced to on the way in, and
// cacheReader, the decision's view of them.

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
		st.Hash, st.Exists, st.Keys = e.hash, true, e.keys
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

// configEntry is all the cache keeps of a ConfigMap or Secret: its name,
// resourceVersion, creation and last-write times, the annotations that steer
// reloads (ignore, match), the hash of its data and the short digest of each
// key (for per-key reloads: two 8-byte digests plus the key's name each). Memory therefore grows with the number of objects, not
// their size, and no value is ever held by the controller. It is smaller than
// an ObjectMeta; the informer reaches its metadata through GetObjectMeta.
type configEntry struct {
	name, namespace, resourceVersion string
	annotations                      map[string]string
	hash                             string
	keys                             hash.Keys
	created, written                 time.Time
	// writer and writeOp are the field manager and operation of the newest
	// managedFields entry: who made the last write (audit trail, Events).
	writer, writeOp string
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
func (c *Controller) stripConfig(obj any) (any, error) {
	return stripConfig(c.o.Names, c.o.Hash, c.o.KeyDigests, obj), nil
}

// stripConfig keeps of a ConfigMap or Secret what the decision reads, with
// the annotations of n that steer reloads: the whole hash under a and the
// per-key digests of kd.
func stripConfig(n annotations.Names, a hash.Algorithm, kd hash.KeyDigester, obj any) any {
	var m metav1.Object
	var h string
	var keys hash.Keys
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		m, h, keys = o, a.ConfigMap(o.Data, o.BinaryData), kd.ConfigMapKeys(o.Data, o.BinaryData)
	case *corev1.Secret:
		m, h, keys = o, a.Secret(o.Data), kd.SecretKeys(o.Data)
	default:
		return obj // already an entry, or a tombstone
	}
	e := &configEntry{name: m.GetName(), namespace: m.GetNamespace(), resourceVersion: m.GetResourceVersion(), hash: h, keys: keys,
		created: m.GetCreationTimestamp().Time}
	e.written, e.writer, e.writeOp = newestWrite(m)
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

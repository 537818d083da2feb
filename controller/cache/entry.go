package cache

import (
	"encoding/json"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// configEntry is all the cache keeps of a ConfigMap or Secret: its name,
// resourceVersion, creation and last-write times, the annotations that steer
// reloads (ignore, match), the hash of its data and the short digest of each
// key (for per-key reloads: two 8-byte digests plus the key's name each).
// Memory therefore grows with the number of objects, not their size, and no
// value is ever held by the controller. It is smaller than an ObjectMeta; the
// informer reaches its metadata through GetObjectMeta.
type configEntry struct {
	name, namespace, resourceVersion string
	annotations                      map[string]string
	hash                             string
	keys                             hash.Keys
	created, written                 time.Time
	// writer and writeOp are the field manager and operation of the newest
	// managedFields entry that owns content: who made the last write (audit
	// trail, Events).
	writer, writeOp string
}

// GetObjectMeta implements metav1.ObjectMetaAccessor (keys and indexes).
func (e *configEntry) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Name: e.name, Namespace: e.namespace, ResourceVersion: e.resourceVersion, Annotations: e.annotations}
}

// MetaOf is the metadata of anything the caches hold, tombstones included.
func MetaOf(obj any) metav1.Object {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return &metav1.ObjectMeta{}
	}
	return m
}

// HashOf is the content hash the cache kept of a ConfigMap or Secret, "" for
// anything else: handlers compare it to tell a content change from a
// metadata one.
func HashOf(obj any) string {
	if e, ok := obj.(*configEntry); ok {
		return e.hash
	}
	return ""
}

// stateOf is the decision's view of a cached resource obj (ok: it is
// cached). A SecretProviderClass's content is what its mounts report
// (classHash); its own object only carries annotations.
func stateOf(kind refs.Kind, obj any, ok bool, classHash func() (string, bool)) decide.State {
	var st decide.State
	if ok {
		st.Annotations = MetaOf(obj).GetAnnotations()
	}
	if kind == refs.SecretProviderClass {
		st.Hash, st.Exists = classHash()
		return st
	}
	if e, isEntry := obj.(*configEntry); ok && isEntry {
		st.Hash, st.Exists, st.Keys = e.hash, true, e.keys
		st.ResourceVersion, st.Created, st.Written = e.resourceVersion, e.created, e.written
	}
	return st
}

// stripConfig keeps of a ConfigMap or Secret what the decision reads, with
// the annotations of n that steer reloads: the whole hash under a and the
// per-key digests of kd. Anything else (an entry already, a tombstone) is
// returned as it is.
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
		return obj
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

// stripMeta is the Namespace informer's transform: only labels are read.
func stripMeta(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
		if ns, ok := obj.(*corev1.Namespace); ok {
			ns.Annotations = nil
		}
	}
	return obj, nil
}

// stripWorkload is the workload informers' transform: the budget reads
// rollout status, nothing else does.
func stripWorkload(keepStatus bool) toolscache.TransformFunc {
	if keepStatus {
		return workload.StripKeepingStatus
	}
	return workload.Strip
}

// lastWrite is when an object was last written, as far as its metadata
// tells: the newest managedFields entry, or its creation. The first-sight
// rule (decide/firstsight.go) compares it with a workload's birth.
func lastWrite(m metav1.Object) time.Time {
	t, _, _ := newestWrite(m)
	return t
}

// newestWrite is lastWrite with the field manager and operation of the
// write that made the content: the newest managedFields entry that owns
// data (data, binaryData, stringData), since a manager owns a field it last
// changed; "" when none does. managedFields times have one-second
// resolution and the apiserver orders entries by name within a second, so
// of two data owners written in the same second the first listed is named.
// The names are copied, so the cache never pins the decoded object's buffer
// through them.
func newestWrite(m metav1.Object) (t time.Time, manager, operation string) {
	t = m.GetCreationTimestamp().Time
	var at time.Time
	for _, f := range m.GetManagedFields() {
		if f.Time == nil {
			continue
		}
		if f.Time.After(t) {
			t = f.Time.Time
		}
		if ownsData(f.FieldsV1) && (manager == "" || f.Time.After(at)) {
			at, manager, operation = f.Time.Time, f.Manager, string(f.Operation)
		}
	}
	return t, strings.Clone(manager), strings.Clone(operation)
}

// ownsData reports whether a managedFields entry owns a key of a ConfigMap's
// or Secret's content (data, binaryData, stringData). Owning only the map
// itself (".") does not count: the creator keeps that after another manager
// has changed every key.
func ownsData(fs *metav1.FieldsV1) bool {
	if fs == nil {
		return false
	}
	var top map[string]map[string]json.RawMessage
	if err := json.Unmarshal(fs.GetRawBytes(), &top); err != nil {
		// Another field's shape (a list, a value) is not ours to read;
		// read the content fields alone.
		var loose map[string]json.RawMessage
		if json.Unmarshal(fs.GetRawBytes(), &loose) != nil {
			return false
		}
		top = map[string]map[string]json.RawMessage{}
		for _, k := range contentFields {
			var m map[string]json.RawMessage
			if raw, ok := loose[k]; ok && json.Unmarshal(raw, &m) == nil {
				top[k] = m
			}
		}
	}
	for _, k := range contentFields {
		for key := range top[k] {
			if key != "." {
				return true
			}
		}
	}
	return false
}

var contentFields = []string{"f:data", "f:binaryData", "f:stringData"}

package cache

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Secrets Store CSI resources, reached through the dynamic client so the
// controller needs no CSI driver Go module.
func spcGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "secrets-store.csi.x-k8s.io", Version: "v1", Resource: "secretproviderclasses"}
}

func spcpsGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "secrets-store.csi.x-k8s.io", Version: "v1", Resource: "secretproviderclasspodstatuses"}
}

// CSIResources are the resources CSI integration needs the apiserver to serve.
func CSIResources() []schema.GroupVersionResource {
	return []schema.GroupVersionResource{spcGVR(), spcpsGVR()}
}

// spcStatus is what the cache keeps of a SecretProviderClassPodStatus: which
// class it reports on and the hash of what the mount holds.
type spcStatus struct {
	workload.Meta
	Class string
	Hash  string
}

func (s *spcStatus) DeepCopyObject() runtime.Object {
	out := &spcStatus{Class: s.Class, Hash: s.Hash}
	out.TypeMeta = s.TypeMeta
	s.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

// spcStatusFromUnstructured is the transform that hashes a pod status as
// the original does, with a, and keeps nothing else of it.
func spcStatusFromUnstructured(a hash.Algorithm) toolscache.TransformFunc {
	return func(obj any) (any, error) { return spcStatusOf(a, obj) }
}

func spcStatusOf(a hash.Algorithm, obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	meta, err := workload.MetaFromUnstructured(u)
	if err != nil {
		return nil, err
	}
	class, _, _ := unstructured.NestedString(u.Object, "status", "secretProviderClassName")
	objects := map[string]string{}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "objects")
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		id, _ := m["id"].(string)
		version, _ := m["version"].(string)
		objects[id] = version
	}
	return &spcStatus{Meta: *meta.(*workload.Meta), Class: class, Hash: a.SecretProviderClassPodStatus(class, objects)}, nil
}

// addCSI builds the CSI informers of s from f (a deferred factory while the
// CSI API is not served).
func (c *Cache) addCSI(s *scope, f dynamicinformer.DynamicSharedInformerFactory) error {
	spc := f.ForResource(spcGVR()).Informer()
	if err := spc.SetTransform(workload.MetaFromUnstructured); err != nil {
		return fmt.Errorf("caching SecretProviderClasses: %w", err)
	}
	s.config[refs.SecretProviderClass] = spc
	st := f.ForResource(spcpsGVR()).Informer()
	if err := st.SetTransform(spcStatusFromUnstructured(c.o.Hash)); err != nil {
		return fmt.Errorf("caching SecretProviderClassPodStatuses: %w", err)
	}
	if err := st.AddIndexers(toolscache.Indexers{indexClass: indexClasses}); err != nil {
		return fmt.Errorf("indexing SecretProviderClassPodStatuses: %w", err)
	}
	s.statuses = st
	return nil
}

// statusHandler turns the mount statuses' events into changed(ns, class)
// when what a class's mounts hold may have changed.
func statusHandler(changed func(ns, class string)) toolscache.ResourceEventHandler {
	on := func(obj any) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if s, ok := obj.(*spcStatus); ok && s.Class != "" {
			changed(s.Namespace, s.Class)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: on,
		UpdateFunc: func(old, cur any) {
			o, n := old.(*spcStatus), cur.(*spcStatus)
			if o.Hash != n.Hash || o.Class != n.Class {
				on(cur)
			}
		},
		DeleteFunc: on,
	}
}

// classHash is the hash of what the class's mounts hold now: the status
// written last (highest resourceVersion). During a rotation the first mount
// to see the new secret moves it, pods started afterwards report the same,
// so one rotation is one reload.
func (s *scope) classHash(ns, class string) (string, bool) {
	if s.statusIdx == nil {
		return "", false
	}
	objs, err := s.statusIdx.ByIndex(indexClass, ns+"/"+class)
	if err != nil {
		return "", false
	}
	return newestStatusHash(objs)
}

// newestStatusHash is the hash of the newest status (by resourceVersion) of
// objs, all about one class: one rotation is one reload.
func newestStatusHash(objs []any) (string, bool) {
	if len(objs) == 0 {
		return "", false
	}
	var best *spcStatus
	var bestRV uint64
	for _, o := range objs {
		st := o.(*spcStatus)
		rv, _ := strconv.ParseUint(st.ResourceVersion, 10, 64)
		if best == nil || rv > bestRV {
			best, bestRV = st, rv
		}
	}
	return best.Hash, true
}

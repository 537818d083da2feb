package cache

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/reloader-dev/reloader/controller/workload"
)

// declaredPrefix starts the OptionalAPI of a declared workload kind:
// "workload-kind:GROUP/VERSION/RESOURCE". Like Argo Rollouts, a declared
// kind not served yet is reported and watched once it is.
const declaredPrefix = "workload-kind:"

// indexWorkloadRef indexes Rollouts by the Deployment their workloadRef
// names: "<ns>/<deployment>".
const indexWorkloadRef = "reloader/workloadref"

// DeclaredAPI is the optional API that serves a declared workload kind.
func DeclaredAPI(d workload.Declared) OptionalAPI {
	return OptionalAPI(declaredPrefix + d.GVR.Group + "/" + d.GVR.Version + "/" + d.GVR.Resource)
}

// declaredGVR is the resource a declared kind's API serves; false for the
// other optional APIs.
func (a OptionalAPI) declaredGVR() (schema.GroupVersionResource, bool) {
	rest, ok := strings.CutPrefix(string(a), declaredPrefix)
	if !ok {
		return schema.GroupVersionResource{}, false
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 {
		return schema.GroupVersionResource{}, false
	}
	return schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[2]}, true
}

// workloadAPI is the optional API a workload kind's informer waits for:
// Argo Rollouts', or a declared kind's own.
func (c *Cache) workloadAPI(kind workload.Kind) (OptionalAPI, bool) {
	if kind == workload.Rollout {
		return ArgoRolloutsAPI, true
	}
	if d, ok := c.o.Table.Lookup(kind); ok {
		return DeclaredAPI(d), true
	}
	return "", false
}

// customTransform is the informer transform of a custom workload kind: its
// metadata and template at the kind's path. A Rollout with a workloadRef
// is given the way to the referenced Deployment's cached template, read
// when it is viewed, so it is never older than the Deployment's cache.
func (c *Cache) customTransform(s *scope, kind workload.Kind) toolscache.TransformFunc {
	transform := c.o.Table.Transform(kind)
	deployments := s.workloads[workload.Deployment]
	if kind != workload.Rollout || deployments == nil {
		return transform
	}
	idx := deployments.GetIndexer()
	return func(obj any) (any, error) {
		out, err := transform(obj)
		if cu, ok := out.(*workload.Custom); ok && err == nil && cu.WorkloadRef != "" {
			key := cu.Namespace + "/" + cu.WorkloadRef
			cu.Referenced = func() *corev1.PodTemplateSpec {
				o, found, _ := idx.GetByKey(key)
				if d, ok := o.(*appsv1.Deployment); found && ok {
					return &d.Spec.Template
				}
				return nil
			}
		}
		return out, err
	}
}

// workloadRefIndexers index a Rollout cache by workloadRef.
func workloadRefIndexers(kind workload.Kind) toolscache.Indexers {
	if kind != workload.Rollout {
		return nil
	}
	return toolscache.Indexers{indexWorkloadRef: func(obj any) ([]string, error) {
		if cu, ok := obj.(*workload.Custom); ok && cu.WorkloadRef != "" {
			return []string{cu.Namespace + "/" + cu.WorkloadRef}, nil
		}
		return nil, nil
	}}
}

// referrers yields the Rollouts whose workloadRef is the Deployment ns/name:
// a change the Deployment's template uses concerns them.
func (s *scope) referrers(kind workload.Kind, ns, name string, yield func(workload.Key) bool) bool {
	idx := s.workloadIdx[workload.Rollout]
	if kind != workload.Deployment || idx == nil {
		return true
	}
	found, err := idx.ByIndex(indexWorkloadRef, ns+"/"+name)
	if err != nil {
		return true
	}
	for _, o := range found {
		if !yield(workload.Key{Kind: workload.Rollout, Namespace: ns, Name: MetaOf(o).GetName()}) {
			return false
		}
	}
	return true
}

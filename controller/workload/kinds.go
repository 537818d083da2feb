package workload

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// kindSpec is how the controller reaches one workload kind: a built-in kind
// through client-go's typed clients and informers, a custom kind through the
// dynamic client at gvr.
type kindSpec struct {
	informer func(informers.SharedInformerFactory) cache.SharedIndexInformer
	get      func(ctx context.Context, cs kubernetes.Interface, ns, name string) (any, error)
	gvr      schema.GroupVersionResource
}

func (s kindSpec) custom() bool { return s.informer == nil }

// kinds holds every kind the controller reloads. Applying a change keeps its
// own dispatch (apply.go): Jobs and CronJobs are not patched at all.
var kinds = map[Kind]kindSpec{
	Deployment: {
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().Deployments().Informer()
		},
		get: func(ctx context.Context, cs kubernetes.Interface, ns, name string) (any, error) {
			return cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		},
	},
	StatefulSet: {
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().StatefulSets().Informer()
		},
		get: func(ctx context.Context, cs kubernetes.Interface, ns, name string) (any, error) {
			return cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		},
	},
	DaemonSet: {
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().DaemonSets().Informer()
		},
		get: func(ctx context.Context, cs kubernetes.Interface, ns, name string) (any, error) {
			return cs.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
		},
	},
	CronJob: {
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Batch().V1().CronJobs().Informer()
		},
		get: func(ctx context.Context, cs kubernetes.Interface, ns, name string) (any, error) {
			return cs.BatchV1().CronJobs(ns).Get(ctx, name, metav1.GetOptions{})
		},
	},
	Job: {
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Batch().V1().Jobs().Informer()
		},
		get: func(ctx context.Context, cs kubernetes.Interface, ns, name string) (any, error) {
			return cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		},
	},
	Rollout:          {gvr: schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}},
	DeploymentConfig: {gvr: schema.GroupVersionResource{Group: "apps.openshift.io", Version: "v1", Resource: "deploymentconfigs"}},
}

// GVR is where the apiserver serves a custom workload kind; false for a
// built-in kind. The controller reaches these through the dynamic client, so
// it needs neither the Argo nor the OpenShift Go modules.
func GVR(k Kind) (schema.GroupVersionResource, bool) {
	s, ok := kinds[k]
	if !ok || !s.custom() {
		return schema.GroupVersionResource{}, false
	}
	return s.gvr, true
}

// Informer is the informer of a built-in kind from f; nil for a custom kind.
func Informer(k Kind, f informers.SharedInformerFactory) cache.SharedIndexInformer {
	if s, ok := kinds[k]; ok && !s.custom() {
		return s.informer(f)
	}
	return nil
}

// Get reads one workload from the apiserver (not a cache), a custom kind
// through dyn.
func Get(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, k Kind, ns, name string) (View, error) {
	s, ok := kinds[k]
	if !ok {
		return View{}, fmt.Errorf("%s: not a kind the controller reloads", k)
	}
	var obj any
	var err error
	if s.custom() {
		if dyn == nil {
			return View{}, fmt.Errorf("reading %s %s/%s: no dynamic client", k, ns, name)
		}
		u, gerr := dyn.Resource(s.gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err = gerr; err == nil {
			obj, err = CustomFromUnstructured(u)
		}
	} else {
		obj, err = s.get(ctx, cs, ns, name)
	}
	if err != nil {
		return View{}, fmt.Errorf("reading %s %s/%s: %w", k, ns, name, err)
	}
	return ViewOf(obj)
}

package rollout

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/reloader-dev/reloader/controller/workload"
)

// client is how the controller reaches one workload kind through the
// apiserver: the row, in this package, of workload's kinds table. A built-in
// kind goes through client-go's typed clients and informers; a custom kind
// (workload.CustomResource) through the dynamic client at its GVR, so it has
// no informer, get or patch of its own.
type client struct {
	informer func(informers.SharedInformerFactory) cache.SharedIndexInformer
	get      func(ctx context.Context, cs kubernetes.Interface, ns, name string) (any, error)
	patch    patchFunc
	// apply writes a Change (see Apply), patching through the row's patch.
	apply func(ctx context.Context, cs kubernetes.Interface, patch patchFunc, v workload.View, c workload.Change, o Options) error
}

type patchFunc func(ctx context.Context, cs kubernetes.Interface, ns, name string, pt types.PatchType, data []byte, po metav1.PatchOptions) error

// clients holds a row for every kind in workload.All().
var clients = map[workload.Kind]client{
	workload.Deployment: {
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().Deployments().Informer()
		},
		get: func(ctx context.Context, cs kubernetes.Interface, ns, name string) (any, error) {
			return cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		},
		patch: func(ctx context.Context, cs kubernetes.Interface, ns, name string, pt types.PatchType, data []byte, po metav1.PatchOptions) error {
			_, err := cs.AppsV1().Deployments(ns).Patch(ctx, name, pt, data, po)
			return err
		},
		apply: patchTemplate,
	},
	workload.StatefulSet: {
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().StatefulSets().Informer()
		},
		get: func(ctx context.Context, cs kubernetes.Interface, ns, name string) (any, error) {
			return cs.AppsV1().StatefulSets(ns).Get(ctx, name, metav1.GetOptions{})
		},
		patch: func(ctx context.Context, cs kubernetes.Interface, ns, name string, pt types.PatchType, data []byte, po metav1.PatchOptions) error {
			_, err := cs.AppsV1().StatefulSets(ns).Patch(ctx, name, pt, data, po)
			return err
		},
		apply: patchTemplate,
	},
	workload.DaemonSet: {
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Apps().V1().DaemonSets().Informer()
		},
		get: func(ctx context.Context, cs kubernetes.Interface, ns, name string) (any, error) {
			return cs.AppsV1().DaemonSets(ns).Get(ctx, name, metav1.GetOptions{})
		},
		patch: func(ctx context.Context, cs kubernetes.Interface, ns, name string, pt types.PatchType, data []byte, po metav1.PatchOptions) error {
			_, err := cs.AppsV1().DaemonSets(ns).Patch(ctx, name, pt, data, po)
			return err
		},
		apply: patchTemplate,
	},
	workload.CronJob: {
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Batch().V1().CronJobs().Informer()
		},
		get: func(ctx context.Context, cs kubernetes.Interface, ns, name string) (any, error) {
			return cs.BatchV1().CronJobs(ns).Get(ctx, name, metav1.GetOptions{})
		},
		patch: func(ctx context.Context, cs kubernetes.Interface, ns, name string, pt types.PatchType, data []byte, po metav1.PatchOptions) error {
			_, err := cs.BatchV1().CronJobs(ns).Patch(ctx, name, pt, data, po)
			return err
		},
		apply: reloadCronJob,
	},
	workload.Job: {
		informer: func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
			return f.Batch().V1().Jobs().Informer()
		},
		get: func(ctx context.Context, cs kubernetes.Interface, ns, name string) (any, error) {
			return cs.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
		},
		patch: func(ctx context.Context, cs kubernetes.Interface, ns, name string, pt types.PatchType, data []byte, po metav1.PatchOptions) error {
			_, err := cs.BatchV1().Jobs(ns).Patch(ctx, name, pt, data, po)
			return err
		},
		apply: recreateJob,
	},
	workload.Rollout:          {apply: patchCustom},
	workload.DeploymentConfig: {apply: patchCustom},
}

// Informer is the informer of a built-in kind from f; nil for a custom kind.
func Informer(k workload.Kind, f informers.SharedInformerFactory) cache.SharedIndexInformer {
	if c, ok := clients[k]; ok && c.informer != nil {
		return c.informer(f)
	}
	return nil
}

// Get reads one workload from the apiserver (not a cache), a custom kind
// through dyn.
func Get(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, k workload.Kind, ns, name string) (workload.View, error) {
	c, ok := clients[k]
	if !ok {
		return workload.View{}, fmt.Errorf("%s: not a kind the controller reloads", k)
	}
	var obj any
	var err error
	if gvr, custom := workload.GVR(k); custom {
		if dyn == nil {
			return workload.View{}, fmt.Errorf("reading %s %s/%s: no dynamic client", k, ns, name)
		}
		u, gerr := dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err = gerr; err == nil {
			obj, err = workload.CustomFromUnstructured(u)
		}
	} else {
		obj, err = c.get(ctx, cs, ns, name)
	}
	if err != nil {
		return workload.View{}, fmt.Errorf("reading %s %s/%s: %w", k, ns, name, err)
	}
	return workload.ViewOf(obj)
}

package rollout

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	batchv1client "k8s.io/client-go/kubernetes/typed/batch/v1"
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
	apply applyFunc
}

type applyFunc func(ctx context.Context, cs kubernetes.Interface, patch patchFunc, v workload.View, c workload.Change, o Options) error

type patchFunc func(ctx context.Context, cs kubernetes.Interface, ns, name string, pt types.PatchType, data []byte, po metav1.PatchOptions) error

// clients is the table of how every kind in workload.All() is read and
// written, a row each; built by each call, as workload's own table is,
// rather than held in a package variable.
func clients() map[workload.Kind]client {
	return map[workload.Kind]client{
		workload.Deployment: builtIn[*appsv1.Deployment](
			func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
				return f.Apps().V1().Deployments().Informer()
			},
			func(cs kubernetes.Interface, ns string) appsv1client.DeploymentInterface {
				return cs.AppsV1().Deployments(ns)
			},
			patchTemplate),
		workload.StatefulSet: builtIn[*appsv1.StatefulSet](
			func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
				return f.Apps().V1().StatefulSets().Informer()
			},
			func(cs kubernetes.Interface, ns string) appsv1client.StatefulSetInterface {
				return cs.AppsV1().StatefulSets(ns)
			},
			patchTemplate),
		workload.DaemonSet: builtIn[*appsv1.DaemonSet](
			func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
				return f.Apps().V1().DaemonSets().Informer()
			},
			func(cs kubernetes.Interface, ns string) appsv1client.DaemonSetInterface {
				return cs.AppsV1().DaemonSets(ns)
			},
			patchTemplate),
		workload.CronJob: builtIn[*batchv1.CronJob](
			func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
				return f.Batch().V1().CronJobs().Informer()
			},
			func(cs kubernetes.Interface, ns string) batchv1client.CronJobInterface {
				return cs.BatchV1().CronJobs(ns)
			},
			reloadCronJob),
		workload.Job: builtIn[*batchv1.Job](
			func(f informers.SharedInformerFactory) cache.SharedIndexInformer {
				return f.Batch().V1().Jobs().Informer()
			},
			func(cs kubernetes.Interface, ns string) batchv1client.JobInterface { return cs.BatchV1().Jobs(ns) },
			recreateJob),
		workload.Rollout:          {apply: patchCustom},
		workload.DeploymentConfig: {apply: patchCustom},
	}
}

// typedAPI is what client-go's typed client of one built-in kind offers in
// a namespace (DeploymentInterface, JobInterface...), as far as used here.
type typedAPI[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

// builtIn is the row of a built-in kind whose objects are T, read and
// patched through api.
func builtIn[T any, A typedAPI[T]](informer func(informers.SharedInformerFactory) cache.SharedIndexInformer,
	api func(cs kubernetes.Interface, ns string) A, apply applyFunc) client {
	return client{
		informer: informer,
		get: func(ctx context.Context, cs kubernetes.Interface, ns, name string) (any, error) {
			return api(cs, ns).Get(ctx, name, metav1.GetOptions{})
		},
		patch: func(ctx context.Context, cs kubernetes.Interface, ns, name string, pt types.PatchType, data []byte, po metav1.PatchOptions) error {
			_, err := api(cs, ns).Patch(ctx, name, pt, data, po)
			return err
		},
		apply: apply,
	}
}

// Informer is the informer of a built-in kind from f; nil for a custom kind.
func Informer(k workload.Kind, f informers.SharedInformerFactory) cache.SharedIndexInformer {
	if c, ok := clients()[k]; ok && c.informer != nil {
		return c.informer(f)
	}
	return nil
}

// Get reads one workload from the apiserver (not a cache), a custom kind
// through dyn.
func Get(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, k workload.Kind, ns, name string) (workload.View, error) {
	return GetOf(ctx, cs, dyn, workload.Table{}, k, ns, name)
}

// GetOf is Get for the built-in kinds and the declared ones in kinds.
func GetOf(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, kinds workload.Table, k workload.Kind, ns, name string) (workload.View, error) {
	c, ok := clients()[k]
	if _, declared := kinds.Lookup(k); declared {
		ok = true
	}
	if !ok {
		return workload.View{}, fmt.Errorf("%s: not a kind the controller reloads", k)
	}
	var obj any
	var err error
	if gvr, custom := kinds.GVR(k); custom {
		if dyn == nil {
			return workload.View{}, fmt.Errorf("reading %s %s/%s: no dynamic client", k, ns, name)
		}
		u, gerr := dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err = gerr; err == nil {
			obj, err = kinds.Transform(k)(u)
		}
	} else {
		obj, err = c.get(ctx, cs, ns, name)
	}
	if err != nil {
		return workload.View{}, fmt.Errorf("reading %s %s/%s: %w", k, ns, name, err)
	}
	if cu, ok := obj.(*workload.Custom); ok && cu.WorkloadRef != "" {
		// An Argo Rollout's workloadRef: its template is the Deployment's.
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, cu.WorkloadRef, metav1.GetOptions{})
		if err != nil {
			return workload.View{}, fmt.Errorf("reading Deployment %s/%s, the workloadRef of %s %s: %w", ns, cu.WorkloadRef, k, name, err)
		}
		cu.Referenced = func() *corev1.PodTemplateSpec { return &d.Spec.Template }
	}
	return workload.ViewOf(obj)
}

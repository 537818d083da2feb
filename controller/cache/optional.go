package cache

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// OptionalAPI is a custom API a flag asks for (Argo Rollouts, Secrets Store
// CSI). When the apiserver does not serve it, the controller says so (a
// warning, an Event, reloader_optional_api_available 0), reloads everything
// else, and starts watching it, without a restart, once it is served.
type OptionalAPI string

const (
	ArgoRolloutsAPI OptionalAPI = "argo-rollouts"
	CSIAPI          OptionalAPI = "secrets-store-csi"
)

// Flag is the command line flag that asks for the API.
func (a OptionalAPI) Flag() string {
	if gvr, declared := a.declaredGVR(); declared {
		return "--workload-kind=" + gvr.Group + "/" + gvr.Version + "/" + gvr.Resource
	}
	if a == ArgoRolloutsAPI {
		return "--is-Argo-Rollouts=true"
	}
	return "--enable-csi-integration=true"
}

// Resources are what the apiserver must serve for the API to be used.
func (a OptionalAPI) Resources() []schema.GroupVersionResource {
	if gvr, declared := a.declaredGVR(); declared {
		return []schema.GroupVersionResource{gvr}
	}
	if a == ArgoRolloutsAPI {
		gvr, _ := workload.GVR(workload.Rollout)
		return []schema.GroupVersionResource{gvr}
	}
	return CSIResources()
}

// Served asks discovery whether every resource of a is served.
func (a OptionalAPI) Served(dc discovery.DiscoveryInterface) (missing []string, err error) {
	for _, gvr := range a.Resources() {
		list, err := dc.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if apierrors.IsNotFound(err) {
			missing = append(missing, gvr.Resource+"."+gvr.Group+"/"+gvr.Version)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("discovering %s: %w", gvr.GroupVersion(), err)
		}
		found := false
		for _, r := range list.APIResources {
			found = found || r.Name == gvr.Resource
		}
		if !found {
			missing = append(missing, gvr.Resource+"."+gvr.Group+"/"+gvr.Version)
		}
	}
	return missing, nil
}

// deferredFactory is the scope's informer factory for an API not served
// yet: its informers are built (indexers, handlers) with the others but only
// started once the API is served.
func (c *Cache) deferredFactory(s *scope, ns string, api OptionalAPI) dynamicinformer.DynamicSharedInformerFactory {
	if !c.o.Unavailable[api] {
		return s.dynamicFactory
	}
	if s.deferred == nil {
		s.deferred = map[OptionalAPI]dynamicinformer.DynamicSharedInformerFactory{}
	}
	f, ok := s.deferred[api]
	if !ok {
		f = dynamicinformer.NewFilteredDynamicSharedInformerFactory(c.o.Dynamic, 0, ns, nil)
		s.deferred[api] = f
	}
	return f
}

// deferredInformer says whether inf waits for an API that is not served.
func (c *Cache) deferredInformer(s *scope, inf toolscache.SharedIndexInformer) bool {
	for kind, w := range s.workloads {
		if api, optional := c.workloadAPI(kind); optional && w == inf {
			return c.o.Unavailable[api]
		}
	}
	if inf == s.config[refs.SecretProviderClass] || inf == s.statuses {
		return c.o.Unavailable[CSIAPI]
	}
	return false
}

// ResourceNames are api's resources as a user reads them
// ("rollouts.argoproj.io/v1alpha1").
func (a OptionalAPI) ResourceNames() []string {
	var out []string
	for _, gvr := range a.Resources() {
		out = append(out, gvr.Resource+"."+gvr.Group+"/"+gvr.Version)
	}
	return out
}

// StartWhenServed polls discovery every interval until api is served, then
// starts its informers in every scope and waits for their caches; their add
// events enqueue the workloads concerned. It returns nil once they are
// synced, or the context's error.
func (c *Cache) StartWhenServed(ctx context.Context, dc discovery.DiscoveryInterface, api OptionalAPI, interval time.Duration) error {
	err := wait.PollUntilContextCancel(ctx, interval, false, func(context.Context) (bool, error) {
		missing, err := api.Served(dc)
		if err != nil {
			c.o.Logger.Debug("checking an optional API", "api", string(api), "error", err)
			return false, nil
		}
		return len(missing) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s to be served: %w", api, err)
	}
	var synced []toolscache.InformerSynced
	for _, s := range c.scopes {
		f := s.deferred[api]
		if f == nil {
			continue
		}
		f.Start(ctx.Done())
		for _, inf := range s.informers() {
			if c.deferredInformer(s, inf) {
				synced = append(synced, inf.HasSynced)
			}
		}
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("waiting for the caches of %s: %w", api, ctx.Err())
	}
	return nil
}

package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

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

// workloadAPIs are the workload kinds an OptionalAPI serves: their informers
// wait for it.
var workloadAPIs = map[workload.Kind]OptionalAPI{workload.Rollout: ArgoRolloutsAPI}

// flag is the command line flag that asked for the API.
func (a OptionalAPI) flag() string {
	if a == ArgoRolloutsAPI {
		return "--is-Argo-Rollouts=true"
	}
	return "--enable-csi-integration=true"
}

// Resources are what the apiserver must serve for the API to be used.
func (a OptionalAPI) Resources() []schema.GroupVersionResource {
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
// yet: its informers are built (handlers, indexers) with the others but only
// started once the API is served.
func (c *Controller) deferredFactory(s *scope, ns string, api OptionalAPI) dynamicinformer.DynamicSharedInformerFactory {
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
func (c *Controller) deferredInformer(s *scope, inf cache.SharedIndexInformer) bool {
	for kind, w := range s.workloads {
		if api, optional := workloadAPIs[kind]; optional && w == inf {
			return c.o.Unavailable[api]
		}
	}
	if inf == s.config[refs.SecretProviderClass] || inf == s.spcStatuses {
		return c.o.Unavailable[CSIAPI]
	}
	return false
}

// announceUnavailable tells the user, once at start, which asked-for APIs
// are missing and what that means.
func (c *Controller) announceUnavailable() {
	for api := range c.o.Unavailable {
		c.o.Metrics.OptionalAPIAvailable.WithLabelValues(string(api)).Set(0)
		msg := fmt.Sprintf("%s, but the apiserver does not serve %s: not watched until it is (checked every %s); everything else is reloaded",
			api.flag(), strings.Join(resourceNames(api), ", "), c.o.APIPollInterval)
		c.o.Logger.Warn(msg, "api", string(api))
		if c.o.Self != nil {
			c.o.Recorder.Event(c.o.Self, corev1.EventTypeWarning, ReasonAPIUnavailable, msg)
		}
	}
	for _, api := range []OptionalAPI{ArgoRolloutsAPI, CSIAPI} {
		if (api == ArgoRolloutsAPI && c.o.ArgoRollouts || api == CSIAPI && c.o.CSI) && !c.o.Unavailable[api] {
			c.o.Metrics.OptionalAPIAvailable.WithLabelValues(string(api)).Set(1)
		}
	}
}

func resourceNames(api OptionalAPI) []string {
	var out []string
	for _, gvr := range api.Resources() {
		out = append(out, gvr.Resource+"."+gvr.Group+"/"+gvr.Version)
	}
	return out
}

// awaitAPI polls discovery until api is served, then starts its informers in
// every scope and waits for their caches; their add events enqueue the
// workloads concerned.
func (c *Controller) awaitAPI(ctx context.Context, api OptionalAPI) {
	err := wait.PollUntilContextCancel(ctx, c.o.APIPollInterval, false, func(context.Context) (bool, error) {
		missing, err := api.Served(c.cs.Discovery())
		if err != nil {
			c.o.Logger.Debug("checking an optional API", "api", string(api), "error", err)
			return false, nil
		}
		return len(missing) == 0, nil
	})
	if err != nil {
		return // shutting down
	}
	var synced []cache.InformerSynced
	for _, s := range c.scopes {
		f := s.deferred[api]
		if f == nil {
			continue
		}
		f.Start(ctx.Done())
		for _, inf := range c.informersOf(s) {
			if c.deferredInformer(s, inf) {
				synced = append(synced, inf.HasSynced)
			}
		}
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return
	}
	c.o.Metrics.OptionalAPIAvailable.WithLabelValues(string(api)).Set(1)
	msg := fmt.Sprintf("%s: the apiserver now serves %s; watching it", api.flag(), strings.Join(resourceNames(api), ", "))
	c.o.Logger.Info(msg, "api", string(api))
	if c.o.Self != nil {
		c.o.Recorder.Event(c.o.Self, corev1.EventTypeNormal, ReasonAPIAvailable, msg)
	}
}

// informersOf lists every informer of a scope.
func (c *Controller) informersOf(s *scope) []cache.SharedIndexInformer {
	var out []cache.SharedIndexInformer
	for _, inf := range s.config {
		out = append(out, inf)
	}
	for _, inf := range s.workloads {
		out = append(out, inf)
	}
	if s.spcStatuses != nil {
		out = append(out, s.spcStatuses)
	}
	return out
}

// defaultAPIPollInterval is how often a missing optional API is looked for.
const defaultAPIPollInterval = 30 * time.Second

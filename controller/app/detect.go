package app

import (
	"context"
	"fmt"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/cache"
	"github.com/reloader-dev/reloader/controller/workload"
)

// detectAPIs notes which optional APIs asked for are not served yet, checks
// that OpenShift's is when --is-openshift=true, and turns DeploymentConfig
// support on when the OpenShift API exists and the user did not decide
// (--is-openshift unset), as the original does. The three APIs share one
// discovery pass, hence one function.
func detectAPIs(cs kubernetes.Interface, co *controller.Options, openshiftAuto bool) error {
	served := func(gvr schema.GroupVersionResource) (bool, error) {
		list, err := cs.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("discovering %s: %w", gvr.GroupVersion(), err)
		}
		for _, r := range list.APIResources {
			if r.Name == gvr.Resource {
				return true, nil
			}
		}
		return false, nil
	}
	require := func(flag string, gvrs ...schema.GroupVersionResource) error {
		var missing []string
		for _, g := range gvrs {
			ok, err := served(g)
			if err != nil {
				return err
			}
			if !ok {
				missing = append(missing, g.Resource+"."+g.Group+"/"+g.Version)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%s: the apiserver does not serve %s (is the CRD installed?)", flag, strings.Join(missing, ", "))
		}
		return nil
	}
	// Missing Argo Rollouts or CSI APIs degrade as in the original: the
	// rest is reloaded; unlike the original, they are picked up once served.
	asked := map[cache.OptionalAPI]bool{cache.ArgoRolloutsAPI: co.ArgoRollouts, cache.CSIAPI: co.CSI}
	for _, d := range co.Declared.Declared() {
		asked[cache.DeclaredAPI(d)] = true
	}
	for api, on := range asked {
		if !on {
			continue
		}
		missing, err := api.Served(cs.Discovery())
		if err != nil {
			return err
		}
		if len(missing) > 0 {
			if co.Unavailable == nil {
				co.Unavailable = map[cache.OptionalAPI]bool{}
			}
			co.Unavailable[api] = true
		}
	}
	dc, _ := workload.GVR(workload.DeploymentConfig)
	if co.OpenShift {
		if err := require("--is-openshift", dc); err != nil {
			return err
		}
	} else if openshiftAuto {
		ok, err := served(dc)
		if err != nil {
			return err
		}
		// Served is not enough: a controller installed without the rights to
		// watch DeploymentConfigs would never get its caches in sync. Turn
		// the kind on only when this identity may list and watch it.
		if ok {
			ok, err = mayWatch(cs, dc, co.Namespaces)
			if err != nil {
				return err
			}
		}
		co.OpenShift = ok
	}
	return nil
}

// mayWatch asks the apiserver whether this identity may list and watch gvr
// in every namespace it watches (all namespaces when the list is empty).
func mayWatch(cs kubernetes.Interface, gvr schema.GroupVersionResource, namespaces []string) (bool, error) {
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	for _, ns := range namespaces {
		for _, verb := range []string{"list", "watch"} {
			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource},
			}}
			res, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(context.Background(), review, metav1.CreateOptions{})
			if err != nil {
				return false, fmt.Errorf("checking access to %s: %w", gvr.Resource, err)
			}
			if !res.Status.Allowed {
				return false, nil
			}
		}
	}
	return true, nil
}

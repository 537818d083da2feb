package charts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// fieldManager owns what ApplyRBAC applies, so a second call updates in place.
const fieldManager = "reloader-charts"

// rbacKinds are the kinds that make up the controller's identity and rights.
var rbacKinds = map[string]bool{
	"ServiceAccount":     true,
	"ClusterRole":        true,
	"ClusterRoleBinding": true,
	"Role":               true,
	"RoleBinding":        true,
}

// ApplyRBAC renders the chart name for rel and applies its ServiceAccount and
// RBAC objects, and only those, to the cluster cfg points at (cfg must be
// allowed to grant the rules, e.g. system:masters). Namespaces the objects
// live in are created when missing. It returns the name of the ServiceAccount
// the chart's Deployment runs as, in rel.Namespace, so a test can run the
// controller with exactly the rights the chart gives it:
//
//	sa, err := charts.ApplyRBAC(ctx, cp.Admin, charts.Reloader, charts.Release{Name: "reloader", Namespace: ns, Values: vals})
//	...
//	cfg, err := cp.ServiceAccountConfig(ctx, ns, sa) // a token of that ServiceAccount
func ApplyRBAC(ctx context.Context, cfg *rest.Config, name string, rel Release) (serviceAccount string, err error) {
	c, err := Load(name)
	if err != nil {
		return "", err
	}
	manifest, err := Render(c, rel)
	if err != nil {
		return "", err
	}
	objs, err := Objects(manifest)
	if err != nil {
		return "", err
	}
	cl, err := newCluster(cfg)
	if err != nil {
		return "", err
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			serviceAccount, _, _ = unstructured.NestedString(o.Object, "spec", "template", "spec", "serviceAccountName")
		}
		if !rbacKinds[o.GetKind()] {
			continue
		}
		if ns := o.GetNamespace(); ns != "" {
			if err := cl.ensureNamespace(ctx, ns); err != nil {
				return "", err
			}
		}
		if err := cl.apply(ctx, o); err != nil {
			return "", err
		}
	}
	if serviceAccount == "" {
		return "", fmt.Errorf("chart %s rendered no Deployment with a serviceAccountName for release %s/%s", name, rel.Namespace, rel.Name)
	}
	return serviceAccount, nil
}

// DryRun has the apiserver cfg points at admit every object as a new one
// (server-side dry run: defaulting, validation, admission) without storing
// anything. Custom kinds must be served already. Every failure is returned.
func DryRun(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	cl, err := newCluster(cfg)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		if err := cl.dryRunCreate(ctx, o); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// cluster reaches any kind, built-in or custom, through the dynamic client.
type cluster struct {
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

// newCluster discovers the apiserver's resources once; build a new one after
// installing CRDs.
func newCluster(cfg *rest.Config) (*cluster, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building a clientset for %s: %w", cfg.Host, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building a dynamic client for %s: %w", cfg.Host, err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building a discovery client for %s: %w", cfg.Host, err)
	}
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil {
		return nil, fmt.Errorf("discovering the API resources of %s: %w", cfg.Host, err)
	}
	return &cluster{cs: cs, dyn: dyn, mapper: restmapper.NewDiscoveryRESTMapper(groups)}, nil
}

// resource is the client for o's kind, scoped to its namespace when the kind
// is namespaced.
func (c *cluster) resource(o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := o.GroupVersionKind()
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s %q: the apiserver does not serve this kind: %w", gvk, o.GetName(), err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if o.GetNamespace() == "" {
			return nil, fmt.Errorf("%s %q is namespaced but has no namespace", o.GetKind(), o.GetName())
		}
		return c.dyn.Resource(m.Resource).Namespace(o.GetNamespace()), nil
	}
	return c.dyn.Resource(m.Resource), nil
}

func (c *cluster) apply(ctx context.Context, o *unstructured.Unstructured) error {
	ri, err := c.resource(o)
	if err != nil {
		return err
	}
	data, err := json.Marshal(o.Object)
	if err != nil {
		return fmt.Errorf("encoding %s %s: %w", o.GetKind(), describe(o), err)
	}
	force := true
	if _, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: fieldManager, Force: &force}); err != nil {
		return fmt.Errorf("applying %s %s: %w", o.GetKind(), describe(o), err)
	}
	return nil
}

// dryRunCreate asks the apiserver to admit o as a new object without storing
// it: defaulting, validation and admission all run.
func (c *cluster) dryRunCreate(ctx context.Context, o *unstructured.Unstructured) error {
	ri, err := c.resource(o)
	if err != nil {
		return err
	}
	if _, err := ri.Create(ctx, o, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("server-side dry-run create of %s %s: %w", o.GetKind(), describe(o), err)
	}
	return nil
}

func (c *cluster) ensureNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

func describe(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

package rollout

import (
	"context"
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/workload"
)

// patchCustom writes a change to a custom workload (Rollout,
// DeploymentConfig, a declared kind) with a JSON merge patch (custom
// resources take no strategic merge patch). A merge patch replaces a list
// whole, so the containers are sent complete, but built from the raw
// containers the cache kept (see Custom) with only the reload variables
// changed; the template's other fields are not sent at all. The template is
// written where the kind keeps it (a declared kind's template path). The
// resourceVersion guard turns any concurrent edit into a conflict that is
// retried from fresh state. A Rollout with a workloadRef has its template
// written to the Deployment it references (writeReferenced).
func patchCustom(ctx context.Context, cs kubernetes.Interface, _ patchFunc, v workload.View, c workload.Change, o Options) error {
	gvr, _ := o.Kinds.GVR(v.Kind)
	if o.Dynamic == nil {
		return fmt.Errorf("patching %s: no dynamic client", v.Key())
	}
	cu, ok := v.Object.(*workload.Custom)
	if !ok {
		return fmt.Errorf("patching %s: cached as %T, not as a custom workload", v.Key(), v.Object)
	}
	spec := map[string]any{}
	if cu.WorkloadRef != "" {
		if err := writeReferenced(ctx, cs, v, cu.WorkloadRef, c, o); err != nil {
			return err
		}
	} else {
		tmpl, err := customTemplatePatch(v, cu, c)
		if err != nil {
			return err
		}
		if len(tmpl) > 0 {
			path := []string{"spec", "template"}
			if d, declared := o.Kinds.Lookup(v.Kind); declared {
				path = d.TemplatePath
			}
			nest(spec, path[1:], tmpl)
		}
	}
	if c.RestartAt != nil {
		spec["restartAt"] = *c.RestartAt
	}
	data, err := encodePatch(v, c, spec)
	if err != nil {
		return err
	}
	_, err = o.Dynamic.Resource(gvr).Namespace(v.Object.GetNamespace()).Patch(ctx, v.Object.GetName(), types.MergePatchType, data,
		metav1.PatchOptions{FieldManager: o.FieldManager})
	if err != nil {
		return fmt.Errorf("patching %s: %w", v.Key(), err)
	}
	return nil
}

// customTemplatePatch is the template part of a custom workload's merge
// patch: the template annotations and the containers with their variables.
func customTemplatePatch(v workload.View, cu *workload.Custom, c workload.Change) (map[string]any, error) {
	tmpl := map[string]any{}
	if len(c.TemplateAnnotations) > 0 {
		tmpl["metadata"] = map[string]any{"annotations": c.TemplateAnnotations}
	}
	if len(c.Env) > 0 {
		containers, err := envOnRaw(v.Key(), cu.Containers, c.Env)
		if err != nil {
			return nil, fmt.Errorf("patching %s: %w", v.Key(), err)
		}
		tmpl["spec"] = map[string]any{"containers": containers}
	}
	return tmpl, nil
}

// nest sets m[path[0]][path[1]]...= leaf, making the maps between.
func nest(m map[string]any, path []string, leaf map[string]any) {
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = leaf
}

// writeReferenced writes a Rollout's template change to the Deployment its
// workloadRef names, which is what Argo Rollouts watches for a new revision
// (the Deployment itself stays scaled to zero). It is a strategic merge
// patch of the template alone, without a resourceVersion guard: the
// Deployment is not the workload decided on, and setting the same variables
// or annotations again changes nothing, so a retry after the Rollout's own
// write failed rolls nothing twice. The Rollout's record is written after.
func writeReferenced(ctx context.Context, cs kubernetes.Interface, v workload.View, deployment string, c workload.Change, o Options) error {
	if len(c.Env) == 0 && len(c.TemplateAnnotations) == 0 {
		return nil // the record alone, or Argo's restart: the Rollout's own
	}
	tmpl := map[string]any{}
	if len(c.TemplateAnnotations) > 0 {
		tmpl["metadata"] = map[string]any{"annotations": c.TemplateAnnotations}
	}
	if len(c.Env) > 0 {
		tmpl["spec"] = map[string]any{"containers": envPatch(c.Env)}
	}
	data, err := json.Marshal(map[string]any{"spec": map[string]any{"template": tmpl}})
	if err != nil {
		return fmt.Errorf("encoding the patch of %s's Deployment %s: %w", v.Key(), deployment, err)
	}
	if err := o.fenced("patching Deployment " + deployment + " for " + v.Key().String()); err != nil {
		return err
	}
	_, err = cs.AppsV1().Deployments(v.Object.GetNamespace()).Patch(ctx, deployment, types.StrategicMergePatchType, data,
		metav1.PatchOptions{FieldManager: o.FieldManager})
	if err != nil {
		return fmt.Errorf("patching Deployment %s/%s, the workloadRef of %s: %w", v.Object.GetNamespace(), deployment, v.Key(), err)
	}
	return nil
}

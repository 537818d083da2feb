package rollout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/workload"
)

// Options are the write options every request uses.
type Options struct {
	// FieldManager names the controller in managedFields.
	FieldManager string
	// Dynamic reaches custom workload kinds (Rollout, DeploymentConfig, the
	// declared kinds).
	Dynamic dynamic.Interface
	// Kinds are the declared workload kinds: where they are served and
	// where their pod template is.
	Kinds workload.Table
	// Fence, when set, is asked before every write; an error stops the
	// write (an HA replica that cannot know it still leads).
	Fence func() error
}

func (o Options) fenced(what string) error {
	if o.Fence == nil {
		return nil
	}
	if err := o.Fence(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// Apply writes the change. Deployments, StatefulSets and DaemonSets get one
// strategic merge patch guarded by the cached resourceVersion, so a decision
// made on a stale cache fails with a conflict (and is retried from a fresh
// one) instead of reloading twice. A CronJob reload creates a Job from its
// template, named after the change so a retry cannot create two; a Job is
// deleted and recreated with the new template.
func Apply(ctx context.Context, cs kubernetes.Interface, v workload.View, c workload.Change, o Options) error {
	k, ok := clients()[v.Kind]
	if _, declared := o.Kinds.Lookup(v.Kind); declared {
		k, ok = client{apply: patchCustom}, true
	}
	if !ok {
		return fmt.Errorf("applying a change to %s: unsupported kind", v.Key())
	}
	if err := o.fenced("applying a change to " + v.Key().String()); err != nil {
		return err
	}
	return k.apply(ctx, cs, k.patch, v, c, o)
}

func metaPatch(v workload.View, c workload.Change) map[string]any {
	ann := map[string]any{}
	if c.RecordKey != "" {
		ann[c.RecordKey] = c.Record
	}
	for k, val := range c.MetaAnnotations {
		if val == nil {
			ann[k] = nil
		} else {
			ann[k] = *val
		}
	}
	// Every write is guarded by the resourceVersion the decision was made
	// on: one made on an older view fails with a conflict.
	return map[string]any{"annotations": ann, "resourceVersion": v.Object.GetResourceVersion()}
}

// encodePatch is the body every patch shares: the metadata part (record,
// annotations, resourceVersion guard) and, when not empty, spec.
func encodePatch(v workload.View, c workload.Change, spec map[string]any) ([]byte, error) {
	body := map[string]any{"metadata": metaPatch(v, c)}
	if len(spec) > 0 {
		body["spec"] = spec
	}
	data, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the patch of %s: %w", v.Key(), err)
	}
	return data, nil
}

func patchTemplate(ctx context.Context, cs kubernetes.Interface, patch patchFunc, v workload.View, c workload.Change, o Options) error {
	spec := map[string]any{}
	if c.Rollout() {
		tmpl := map[string]any{}
		if len(c.TemplateAnnotations) > 0 {
			tmpl["metadata"] = map[string]any{"annotations": c.TemplateAnnotations}
		}
		if len(c.Env) > 0 {
			tmpl["spec"] = map[string]any{"containers": envPatch(c.Env)}
		}
		spec["template"] = tmpl
	}
	if c.Paused != nil {
		spec["paused"] = *c.Paused
	}
	data, err := encodePatch(v, c, spec)
	if err != nil {
		return err
	}
	po := metav1.PatchOptions{FieldManager: o.FieldManager}
	ns, name := v.Object.GetNamespace(), v.Object.GetName()
	if err := patch(ctx, cs, ns, name, types.StrategicMergePatchType, data, po); err != nil {
		return fmt.Errorf("patching %s: %w", v.Key(), err)
	}
	return nil
}

// envPatch groups variable changes by container, in a strategic merge patch
// shape (containers and env merge by name; "$patch": "delete" removes).
func envPatch(env []workload.EnvChange) []any {
	byContainer := map[string][]any{}
	var order []string
	for _, e := range env {
		if _, ok := byContainer[e.Container]; !ok {
			order = append(order, e.Container)
		}
		if e.Remove {
			byContainer[e.Container] = append(byContainer[e.Container], map[string]any{"name": e.Name, "$patch": "delete"})
		} else {
			byContainer[e.Container] = append(byContainer[e.Container], map[string]any{"name": e.Name, "value": e.Value})
		}
	}
	out := make([]any, 0, len(order))
	for _, c := range order {
		out = append(out, map[string]any{"name": c, "env": byContainer[c]})
	}
	return out
}

// ApplyToTemplate makes the change's template edits on a copy of t, for kinds
// whose reload creates a new object instead of patching.
func ApplyToTemplate(t *corev1.PodTemplateSpec, c workload.Change) {
	if len(c.TemplateAnnotations) > 0 {
		if t.Annotations == nil {
			t.Annotations = map[string]string{}
		}
		maps.Copy(t.Annotations, c.TemplateAnnotations)
	}
	for _, e := range c.Env {
		for i := range t.Spec.Containers {
			ctr := &t.Spec.Containers[i]
			if ctr.Name != e.Container {
				continue
			}
			idx := -1
			for j := range ctr.Env {
				if ctr.Env[j].Name == e.Name {
					idx = j
				}
			}
			switch {
			case e.Remove && idx >= 0:
				ctr.Env = append(ctr.Env[:idx], ctr.Env[idx+1:]...)
			case !e.Remove && idx >= 0:
				ctr.Env[idx].Value, ctr.Env[idx].ValueFrom = e.Value, nil
			case !e.Remove:
				ctr.Env = append(ctr.Env, corev1.EnvVar{Name: e.Name, Value: e.Value})
			}
		}
	}
}

func reloadCronJob(ctx context.Context, cs kubernetes.Interface, patch patchFunc, v workload.View, c workload.Change, o Options) error {
	cj := v.Object.(*batchv1.CronJob)
	if c.Rollout() {
		job := JobFromCronJob(cj, c)
		_, err := cs.BatchV1().Jobs(cj.Namespace).Create(ctx, job, metav1.CreateOptions{FieldManager: o.FieldManager})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Job %s/%s for %s: %w", cj.Namespace, job.Name, v.Key(), err)
		}
	}
	data, err := encodePatch(v, c, nil)
	if err != nil {
		return err
	}
	if err := patch(ctx, cs, cj.Namespace, cj.Name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: o.FieldManager}); err != nil {
		return fmt.Errorf("recording the applied hashes on %s: %w", v.Key(), err)
	}
	return nil
}

// JobFromCronJob builds the Job a CronJob reload creates: the CronJob's job
// template with the change applied, marked as a manual instantiation and owned
// by the CronJob, named deterministically from the change so that a retried
// sync finds it already there instead of creating a second one.
func JobFromCronJob(cj *batchv1.CronJob, c workload.Change) *batchv1.Job {
	spec := cj.Spec.JobTemplate.Spec.DeepCopy()
	ApplyToTemplate(&spec.Template, c)
	ann := map[string]string{"cronjob.kubernetes.io/instantiate": "manual"}
	maps.Copy(ann, cj.Spec.JobTemplate.Annotations)
	prefix := cj.Name
	if len(prefix) > 52 {
		prefix = strings.TrimRight(prefix[:52], "-.")
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:            prefix + "-" + changeID(c),
			Namespace:       cj.Namespace,
			Annotations:     ann,
			Labels:          maps.Clone(cj.Spec.JobTemplate.Labels),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(cj, batchv1.SchemeGroupVersion.WithKind("CronJob"))},
		},
		Spec: *spec,
	}
}

// changeID is a short digest of what a change applies.
func changeID(c workload.Change) string {
	var parts []string
	for _, e := range c.Env {
		parts = append(parts, fmt.Sprintf("env:%s:%s:%s:%v", e.Container, e.Name, e.Value, e.Remove))
	}
	for k, val := range c.TemplateAnnotations {
		parts = append(parts, "ann:"+k+"="+val)
	}
	parts = append(parts, "rec:"+c.Record)
	sort.Strings(parts)
	// SHA-256, not the SHA-1 of the data fingerprints: a name suffix need
	// not match stakater's, and SHA-1 is refused in FIPS 140-only mode.
	sum := sha256.Sum256([]byte(strings.Join(parts, "\n")))
	return hex.EncodeToString(sum[:])[:10]
}

func recreateJob(ctx context.Context, cs kubernetes.Interface, patch patchFunc, v workload.View, c workload.Change, o Options) error {
	old := v.Object.(*batchv1.Job)
	if !c.Rollout() {
		data, err := json.Marshal(map[string]any{"metadata": metaPatch(v, c)})
		if err != nil {
			return fmt.Errorf("encoding the patch of %s: %w", v.Key(), err)
		}
		if err := patch(ctx, cs, old.Namespace, old.Name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: o.FieldManager}); err != nil {
			return fmt.Errorf("recording the applied hashes on %s: %w", v.Key(), err)
		}
		return nil
	}
	job := RecreatedJob(old, c)
	rec, err := recordFor(old, job, c)
	if err != nil {
		return err
	}
	if _, err := cs.BatchV1().Jobs(old.Namespace).Create(ctx, rec, metav1.CreateOptions{FieldManager: o.FieldManager}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("recording the replacement of %s before deleting it: %w", v.Key(), err)
	}
	policy := metav1.DeletePropagationBackground
	uid, rv := old.UID, old.ResourceVersion
	err = cs.BatchV1().Jobs(old.Namespace).Delete(ctx, old.Name, metav1.DeleteOptions{
		PropagationPolicy: &policy,
		// Only the Job this decision was made on: a newer one (already
		// recreated, or edited meanwhile) makes this a conflict to retry.
		Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		// Nothing was deleted: the record has nothing to keep.
		_ = DeleteRecord(ctx, cs, rec)
		return fmt.Errorf("deleting %s to recreate it: %w", v.Key(), err)
	}
	if err := createReplacement(ctx, cs, job, old.UID, o); err != nil {
		return fmt.Errorf("recreating %s (record %s keeps the replacement until it can be created): %w", v.Key(), rec.Name, err)
	}
	// A record left behind (this delete failing) finds the replacement in
	// place and deletes itself.
	_ = DeleteRecord(ctx, cs, rec)
	return nil
}

// RecreatedJob is the Job that replaces old: same metadata and spec with the
// change applied, without the fields the apiserver generates for a Job
// (selector, controller-uid and job-name labels) so it accepts the create.
func RecreatedJob(old *batchv1.Job, c workload.Change) *batchv1.Job {
	job := old.DeepCopy()
	job.ResourceVersion, job.UID, job.Generation = "", "", 0
	job.CreationTimestamp = metav1.Time{}
	job.ManagedFields = nil
	job.Status = batchv1.JobStatus{}
	job.Spec.Selector = nil
	job.Spec.ManualSelector = nil
	for _, l := range []string{"controller-uid", batchv1.ControllerUidLabel, batchv1.JobNameLabel, "job-name"} {
		delete(job.Spec.Template.Labels, l)
		delete(job.Labels, l)
	}
	if job.Annotations == nil {
		job.Annotations = map[string]string{}
	}
	if c.RecordKey != "" {
		job.Annotations[c.RecordKey] = c.Record
	}
	for k, val := range c.MetaAnnotations {
		if val == nil {
			delete(job.Annotations, k)
		} else {
			job.Annotations[k] = *val
		}
	}
	ApplyToTemplate(&job.Spec.Template, c)
	return job
}

package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// A Job reload whose create is refused after the old Job was deleted does
// not lose the Job: the replacement waits in a record and is created as soon
// as the apiserver accepts it.
func TestRefusedJobRecreateIsRetriedFromItsRecord(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	old := createBatchJob(t, cs, ns)

	// Admission refuses every create of a Job named "batch" in this
	// namespace until the binding is deleted.
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "refuse-batch-" + ns},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs"}},
				},
			}}},
			Validations: []admissionv1.Validation{{Expression: "object.metadata.name != 'batch'", Message: "test: refused"}},
		},
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, policy.Name, metav1.DeleteOptions{})
	})
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns},
			}},
		},
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		probe := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "batch"}, Spec: old.Spec}
		probe.Spec.Selector, probe.Spec.Template.Labels = nil, nil
		_, err := cs.BatchV1().Jobs(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "test: refused"), fmt.Sprintf("policy not in force yet (dry-run create: %v)", err)
	})

	r := startReloader(t, "", "--namespaces="+ns)
	r.waitIdle(t, 1)
	updateConfigMapData(t, cs, ns, "batch-config", map[string]string{"k": "2"})

	// The old Job goes, its replacement is refused, and a record of it stays.
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		_, err := cs.BatchV1().Jobs(ns).Get(ctx, "batch", metav1.GetOptions{})
		return apierrors.IsNotFound(err) && len(records(t, ns)) == 1 && r.metric(t, "reloader_errors_total") >= 2,
			fmt.Sprintf("Job get: %v; %d records; %v errors", err, len(records(t, ns)), r.metric(t, "reloader_errors_total"))
	})

	if err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, binding.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var recreated *batchv1.Job
	reloadertest.Eventually(t, 60*time.Second, func() (bool, string) {
		j, err := cs.BatchV1().Jobs(ns).Get(ctx, "batch", metav1.GetOptions{})
		if err != nil {
			return false, "Job not recreated: " + err.Error()
		}
		recreated = j
		return len(records(t, ns)) == 0, fmt.Sprintf("Job back, %d records left", len(records(t, ns)))
	})
	if recreated.UID == old.UID {
		t.Fatal("the old Job was never deleted")
	}
	if templateEnv(recreated.Spec.Template, "STAKATER_BATCH_CONFIG_CONFIGMAP") == "" {
		t.Fatalf("recreated Job lacks the variable: %+v", recreated.Spec.Template.Spec.Containers)
	}
	if recreated.Annotations["reloader.dev/applied-hashes"] == "" {
		t.Fatal("recreated Job lacks the applied-hashes record, so it would be recreated again")
	}
	for _, j := range listJobs(t, cs, ns) {
		if j.Name != "batch" {
			t.Errorf("Job %s left behind", j.Name)
		}
	}
}

// records lists the records of Job reloads in ns.
func records(t *testing.T, ns string) []batchv1.Job {
	t.Helper()
	var out []batchv1.Job
	for _, j := range listJobs(t, cp.AdminClient(t), ns) {
		if _, ok := j.Annotations["reloader.dev/recreates"]; ok {
			if j.Spec.Suspend == nil || !*j.Spec.Suspend || j.Spec.Parallelism == nil || *j.Spec.Parallelism != 0 {
				t.Fatalf("record %s could run pods: suspend %v, parallelism %v", j.Name, j.Spec.Suspend, j.Spec.Parallelism)
			}
			out = append(out, j)
		}
	}
	return out
}

// A reload of a custom kind writes only the reload variable: fields of the
// pod template that k8s.io/api does not know (a newer Kubernetes, the
// kind's own additions) are still there afterwards.
func TestRolloutTemplateFieldsUnknownToUsSurviveAReload(t *testing.T) {
	requireControlPlane(t)
	dyn := installCRDs(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("cfg", map[string]string{"k": "1"}))
	u := customWorkload(t, "argoproj.io/v1alpha1", "Rollout", "web", auto(), usesConfigMap("web", "cfg"))
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	ctr := containers[0].(map[string]any)
	ctr["futureContainerField"] = map[string]any{"mode": "strict"}
	ctr["env"] = []any{map[string]any{"name": "KEEP", "value": "1", "futureEnvField": true}}
	if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(u.Object, "on", "spec", "template", "spec", "futurePodField"); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(rolloutGVR).Namespace(ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := startReloader(t, "", "--namespaces="+ns, "--is-Argo-Rollouts=true")
	r.waitIdle(t, 1)
	updateConfigMapData(t, cs, ns, "cfg", map[string]string{"k": "2"})
	var got *unstructured.Unstructured
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		v, cur := customEnv(t, dyn, rolloutGVR, ns, "web", "STAKATER_CFG_CONFIGMAP")
		got = cur
		return v != "", "Rollout not reloaded yet"
	})
	containers, _, _ = unstructured.NestedSlice(got.Object, "spec", "template", "spec", "containers")
	ctr = containers[0].(map[string]any)
	if mode, _, _ := unstructured.NestedString(ctr, "futureContainerField", "mode"); mode != "strict" {
		t.Errorf("container field unknown to k8s.io/api was dropped: %v", ctr)
	}
	env := ctr["env"].([]any)
	if keep := env[0].(map[string]any); keep["name"] != "KEEP" || keep["futureEnvField"] != true {
		t.Errorf("env entry field unknown to k8s.io/api was dropped: %v", env)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "spec", "template", "spec", "futurePodField"); v != "on" {
		t.Errorf("pod spec field unknown to k8s.io/api was dropped: %v", got.Object["spec"])
	}
}

package compat

import (
	"context"
	"fmt"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/charts"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// series is one expected line of /metrics: the samples of name whose labels
// include every pair of labels, summed, compared with value. atLeast is for
// counters a retry loop keeps raising (errors are retried with backoff).
type series struct {
	name    string
	labels  []string
	value   float64
	atLeast bool
}

// After one reload, one update without a data change, one change in an
// ignored namespace and one reload the apiserver refuses, /metrics holds
// stakater's series with its label values and counts, the client-go request
// metrics, and our own metrics under their names.
func TestMetricsOfAScriptedSequenceMatchStakaters(t *testing.T) {
	needControlPlane(t)
	ctx := testContext(t)
	cs := cp.AdminClient(t)
	ns, ignored := cp.Namespace(t), cp.Namespace(t)

	for _, cm := range []*corev1.ConfigMap{configMap("cfg", map[string]string{"k": "1"}), configMap("frozen-cfg", map[string]string{"k": "1"})} {
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cs.CoreV1().ConfigMaps(ignored).Create(ctx, configMap("other", map[string]string{"k": "1"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []*appsv1.Deployment{autoDeployment("web", "cfg", nil), autoDeployment("frozen", "frozen-cfg", map[string]string{"compat.reloader.dev/frozen": "true"})} {
		if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	freezeRollouts(t, ctx, cs, ns, "frozen")

	// Namespaced, as the chart installs it, with the second namespace watched
	// but ignored (--namespaces-to-ignore).
	rel := charts.Release{Name: "metrics", Namespace: ns, Values: map[string]any{"reloader": map[string]any{
		"watchGlobally": false, "namespaces": []any{ignored}}}}
	c := runAsChart(t, ctx, rel, "--namespaces-to-ignore="+ignored)
	waitAdopted(t, ctx, cs, ns, "web")
	waitAdopted(t, ctx, cs, ns, "frozen")

	// reload
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, configMap("cfg", map[string]string{"k": "2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitReloaded(t, ctx, cs, ns, "web", "STAKATER_CFG_CONFIGMAP")
	// skip: labels only
	labelled := configMap("cfg", map[string]string{"k": "2"})
	labelled.Labels = map[string]string{"touched": "yes"}
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, labelled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// ignored
	if _, err := cs.CoreV1().ConfigMaps(ignored).Update(ctx, configMap("other", map[string]string{"k": "2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// error: the apiserver refuses the rollout
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, configMap("frozen-cfg", map[string]string{"k": "2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []series{
		{"reloader_reload_executed_total", []string{`success="true"`}, 1, false},
		{"reloader_reload_executed_total", []string{`success="false"`}, 1, true},
		{"reloader_action_total", []string{`result="success"`, `workload_kind="Deployment"`}, 1, false},
		{"reloader_action_total", []string{`result="error"`, `workload_kind="Deployment"`}, 1, true},
		{"reloader_action_latency_seconds_count", []string{`workload_kind="Deployment"`}, 2, true},
		{"reloader_skipped_total", []string{`reason="no_data_change"`}, 1, false},
		{"reloader_skipped_total", []string{`reason="ignored_or_not_selected"`}, 1, false},
		{"reloader_reconcile_total", []string{`result="success"`}, 1, false},
		{"reloader_reconcile_total", []string{`result="skipped"`}, 1, false},
		{"reloader_reconcile_total", []string{`result="error"`}, 1, true},
		{"reloader_reconcile_duration_seconds_count", []string{`result="success"`}, 1, false},
		{"reloader_errors_total", []string{`type="handler_error"`}, 1, true},
		{"reloader_retries_total", nil, 1, true},
		{"reloader_events_received_total", []string{`event_type="update"`, `resource_type="configmaps"`}, 4, false},
		{"reloader_events_received_total", []string{`event_type="add"`, `resource_type="configmaps"`}, 3, true},
		{"reloader_events_processed_total", []string{`event_type="unknown"`, `resource_type="configmaps"`, `result="success"`}, 3, false},
		{"reloader_workloads_scanned_total", []string{`kind="Deployment"`}, 4, false},
		{"reloader_workloads_scanned_total", []string{`kind="StatefulSet"`}, 0, false},
		{"reloader_workloads_matched_total", []string{`kind="Deployment"`}, 1, false},
		{"reloader_workloads_matched_total", []string{`kind="DaemonSet"`}, 0, false},
		{"reloader_workqueue_adds_total", nil, 2, true},
		{"reloader_workqueue_depth", nil, 0, true},
		{"reloader_workqueue_latency_seconds_count", nil, 2, true},
		{"rest_client_requests_total", []string{`method="GET"`, `code="200"`}, 1, true},
		{"rest_client_requests_total", []string{`method="PATCH"`}, 2, true},
		{"rest_client_request_duration_seconds_count", []string{`verb="GET"`}, 1, true},
		// Ours, under their own names.
		{"reloader_workload_syncs_total", []string{`result="success"`}, 2, true},
		{"reloader_cache_synced", nil, 1, false},
		{"reloader_reload_coalesced_total", nil, 0, false},
	}
	var got map[string]float64
	reloadertest.Eventually(t, time.Minute, func() (bool, string) {
		got = scrape(t, c)
		for _, s := range want {
			if msg := s.mismatch(got); msg != "" {
				return false, msg
			}
		}
		return true, ""
	})
	// Settled: the counts that must be exact stay so.
	time.Sleep(time.Second)
	got = scrape(t, c)
	for _, s := range want {
		if msg := s.mismatch(got); msg != "" {
			t.Error(msg)
		}
	}
}

func (s series) mismatch(samples map[string]float64) string {
	v, found := sum(samples, s.name, s.labels...)
	switch {
	case !found:
		return fmt.Sprintf("no series %s%v in /metrics", s.name, s.labels)
	case s.atLeast && v < s.value:
		return fmt.Sprintf("%s%v = %v, want at least %v", s.name, s.labels, v, s.value)
	case !s.atLeast && v != s.value:
		return fmt.Sprintf("%s%v = %v, want %v", s.name, s.labels, v, s.value)
	}
	return ""
}

// freezeRollouts has the apiserver refuse any change to the pod template of
// Deployments labelled compat.reloader.dev/frozen in ns (a
// ValidatingAdmissionPolicy, as a cluster's policy engine would), while
// metadata changes pass; it returns once the policy is in force.
func freezeRollouts(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns, probe string) {
	t.Helper()
	fail := admissionv1.Fail
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "compat-freeze-" + ns},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{
				ObjectSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"compat.reloader.dev/frozen": "true"}},
				ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
				}}},
			},
			Validations: []admissionv1.Validation{{Expression: "object.spec.template == oldObject.spec.template", Message: "rollouts are frozen"}},
		},
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}},
		},
	}
	if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		bg := context.Background()
		_ = cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(bg, binding.Name, metav1.DeleteOptions{})
		_ = cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(bg, policy.Name, metav1.DeleteOptions{})
	})
	reloadertest.Eventually(t, time.Minute, func() (bool, string) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, probe, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		d.Spec.Template.Annotations = map[string]string{"probe": time.Now().String()}
		_, err = cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil, "the admission policy freezing " + probe + " is not in force yet"
	})
}

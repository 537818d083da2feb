package charts

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The keys of stakater's chart that an earlier version of this chart
// ignored are honoured with stakater's meaning.
func TestStakaterKeysAreHonoured(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   map[string]any
		check func(t *testing.T, objs []*unstructured.Unstructured)
	}{
		{"custom_annotations become flags", map[string]any{"reloader.custom_annotations": map[string]any{
			"configmap": "a.example/cm", "secret": "a.example/s", "auto": "a.example/auto", "ignore": "a.example/ignore"}},
			func(t *testing.T, objs []*unstructured.Unstructured) {
				args := container(t, objs).Args
				for _, want := range []string{"--configmap-annotation=a.example/cm", "--secret-annotation=a.example/s", "--auto-annotation=a.example/auto", "--ignore-annotation=a.example/ignore"} {
					if !slices.Contains(args, want) {
						t.Errorf("args %v lack %s", args, want)
					}
				}
			}},
		{"GOMAXPROCS and GOMEMLIMIT follow the limits unless overridden", map[string]any{"reloader.deployment.gomaxprocsOverride": "2"},
			func(t *testing.T, objs []*unstructured.Unstructured) {
				env := map[string]corev1.EnvVar{}
				for _, e := range container(t, objs).Env {
					env[e.Name] = e
				}
				if env["GOMAXPROCS"].Value != "2" {
					t.Errorf("GOMAXPROCS = %+v, want the override 2", env["GOMAXPROCS"])
				}
				if r := env["GOMEMLIMIT"].ValueFrom; r == nil || r.ResourceFieldRef == nil || r.ResourceFieldRef.Resource != "limits.memory" {
					t.Errorf("GOMEMLIMIT = %+v, want it from limits.memory", env["GOMEMLIMIT"])
				}
			}},
		{"pod fields", map[string]any{"reloader.deployment.hostUsers": false, "reloader.deployment.runtimeClassName": "gvisor",
			"reloader.deployment.schedulerName": "custom", "reloader.deployment.automountServiceAccountToken": false,
			"reloader.deployment.dnsConfig": map[string]any{"options": []any{map[string]any{"name": "ndots", "value": "1"}}}},
			func(t *testing.T, objs []*unstructured.Unstructured) {
				spec := deployment(t, objs).Spec.Template.Spec
				if spec.HostUsers == nil || *spec.HostUsers || spec.RuntimeClassName == nil || *spec.RuntimeClassName != "gvisor" ||
					spec.SchedulerName != "custom" || spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken ||
					spec.DNSConfig == nil || len(spec.DNSConfig.Options) != 1 {
					t.Errorf("pod spec hostUsers %v runtimeClass %v scheduler %q automount %v dnsConfig %+v", spec.HostUsers, spec.RuntimeClassName, spec.SchedulerName, spec.AutomountServiceAccountToken, spec.DNSConfig)
				}
			}},
		{"serviceAccount.automountServiceAccountToken", map[string]any{"reloader.serviceAccount.automountServiceAccountToken": true},
			func(t *testing.T, objs []*unstructured.Unstructured) {
				if v, _, _ := unstructured.NestedBool(ofKind(objs, "ServiceAccount")[0].Object, "automountServiceAccountToken"); !v {
					t.Error("ServiceAccount automountServiceAccountToken is not true")
				}
			}},
		{"deployment.volumes and volumeMounts", map[string]any{
			"reloader.deployment.volumes":      []any{map[string]any{"name": "ca", "configMap": map[string]any{"name": "ca"}}},
			"reloader.deployment.volumeMounts": []any{map[string]any{"name": "ca", "mountPath": "/ca"}}},
			func(t *testing.T, objs []*unstructured.Unstructured) {
				spec := deployment(t, objs).Spec.Template.Spec
				if !slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == "ca" }) ||
					!slices.ContainsFunc(spec.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/ca" }) {
					t.Errorf("volumes %+v mounts %+v lack ca", spec.Volumes, spec.Containers[0].VolumeMounts)
				}
			}},
		{"service dual stack", map[string]any{"reloader.service.ipFamilyPolicy": "PreferDualStack", "reloader.service.ipFamilies": []any{"IPv6", "IPv4"}},
			func(t *testing.T, objs []*unstructured.Unstructured) {
				var svc corev1.Service
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ofKind(objs, "Service")[0].Object, &svc); err != nil {
					t.Fatal(err)
				}
				if svc.Spec.IPFamilyPolicy == nil || *svc.Spec.IPFamilyPolicy != "PreferDualStack" || len(svc.Spec.IPFamilies) != 2 {
					t.Errorf("service ipFamilyPolicy %v ipFamilies %v", svc.Spec.IPFamilyPolicy, svc.Spec.IPFamilies)
				}
			}},
		{"top-level namespace", map[string]any{"namespace": "elsewhere"},
			func(t *testing.T, objs []*unstructured.Unstructured) {
				for _, o := range objs {
					if o.GetKind() != "ClusterRole" && o.GetKind() != "ClusterRoleBinding" && o.GetNamespace() != "elsewhere" {
						t.Errorf("%s %s is in namespace %q, want elsewhere", o.GetKind(), o.GetName(), o.GetNamespace())
					}
				}
			}},
		{"templates in labels and annotations", map[string]any{"reloader.deployment.labels": map[string]any{"owner": "{{ .Release.Name }}-team"},
			"reloader.deployment.pod.annotations": map[string]any{"ns": "{{ .Release.Namespace }}"}},
			func(t *testing.T, objs []*unstructured.Unstructured) {
				d := deployment(t, objs)
				if d.Labels["owner"] != "rel-team" || d.Spec.Template.Annotations["ns"] != "ops" {
					t.Errorf("labels %v, pod annotations %v: templates not expanded", d.Labels, d.Spec.Template.Annotations)
				}
			}},
		{"verticalPodAutoscaler", map[string]any{"reloader.verticalPodAutoscaler.enabled": true, "reloader.verticalPodAutoscaler.controlledValues": "RequestsOnly"},
			func(t *testing.T, objs []*unstructured.Unstructured) {
				vpas := ofKind(objs, "VerticalPodAutoscaler")
				if len(vpas) != 1 {
					t.Fatalf("rendered %d VerticalPodAutoscalers, want 1", len(vpas))
				}
				policies, _, _ := unstructured.NestedSlice(vpas[0].Object, "spec", "resourcePolicy", "containerPolicies")
				if len(policies) != 1 || policies[0].(map[string]any)["containerName"] != "rel-reloader" {
					t.Errorf("container policies %v, want one for container rel-reloader", policies)
				}
			}},
		{"enableMetricsByNamespace", map[string]any{"reloader.enableMetricsByNamespace": true},
			func(t *testing.T, objs []*unstructured.Unstructured) {
				if !slices.ContainsFunc(container(t, objs).Env, func(e corev1.EnvVar) bool { return e.Name == "METRICS_COUNT_BY_NAMESPACE" && e.Value == "enabled" }) {
					t.Error("METRICS_COUNT_BY_NAMESPACE=enabled not set")
				}
			}},
		{"stakater's names, selector and container", nil,
			func(t *testing.T, objs []*unstructured.Unstructured) {
				d := deployment(t, objs)
				sel := d.Spec.Selector.MatchLabels
				if d.Name != "rel-reloader" || len(sel) != 2 || sel["app"] != "rel-reloader" || sel["release"] != "rel" || d.Spec.Template.Spec.Containers[0].Name != "rel-reloader" {
					t.Errorf("deployment %s selector %v container %s", d.Name, sel, d.Spec.Template.Spec.Containers[0].Name)
				}
				var names []string
				for _, o := range objs {
					names = append(names, o.GetKind()+"/"+o.GetName())
				}
				for _, want := range []string{"ServiceAccount/rel-reloader", "ClusterRole/rel-reloader-role", "ClusterRoleBinding/rel-reloader-role-binding", "Role/rel-reloader-metadata-role", "RoleBinding/rel-reloader-metadata-role-binding"} {
					if !slices.Contains(names, want) {
						t.Errorf("objects %s lack %s", strings.Join(names, ", "), want)
					}
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, render(t, Reloader, Release{Name: "rel", Namespace: "ops", Values: values(tc.set)}))
		})
	}
}

func container(t *testing.T, objs []*unstructured.Unstructured) corev1.Container {
	t.Helper()
	return deployment(t, objs).Spec.Template.Spec.Containers[0]
}

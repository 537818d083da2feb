package charts

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// restricted evaluates the chart's pod against the Pod Security Standard
// "restricted" at the apiserver's version, with the upstream library.
func restricted(t *testing.T, pod *corev1.PodTemplateSpec) policy.AggregateCheckResult {
	t.Helper()
	_, minor := serverVersion(t)
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	lv := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.MajorMinorVersion(1, minor)}
	return policy.AggregateCheckResults(evaluator.EvaluatePod(lv, &pod.ObjectMeta, &pod.Spec))
}

// enforcingNamespace is a namespace whose PodSecurity admission enforces
// "restricted", so the real apiserver judges the pod too.
func enforcingNamespace(t *testing.T) string {
	t.Helper()
	ns := cp.Namespace(t)
	cs := cp.AdminClient(t)
	ctx := testContext(t)
	n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[psaapi.EnforceLevelLabel] = string(psaapi.LevelRestricted)
	n.Labels[psaapi.EnforceVersionLabel] = "latest"
	if _, err := cs.CoreV1().Namespaces().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("labelling namespace %s to enforce restricted: %v", ns, err)
	}
	return ns
}

// dryRunPod submits the Deployment's pod template as a Pod.
func dryRunPod(t *testing.T, namespace string, tmpl *corev1.PodTemplateSpec) error {
	t.Helper()
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "reloader", Namespace: namespace, Labels: tmpl.Labels},
		Spec:       tmpl.Spec,
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := newCluster(cp.Admin)
	if err != nil {
		t.Fatal(err)
	}
	return cl.dryRunCreate(testContext(t), &unstructured.Unstructured{Object: obj})
}

// The default values, hardened (read-only root, no privilege escalation, no
// capabilities, RuntimeDefault seccomp, non-root 65534), pass "restricted"
// in the upstream library and in the apiserver's own admission.
func TestDefaultPodPassesRestrictedPodSecurity(t *testing.T) {
	needControlPlane(t)
	version, _ := serverVersion(t)
	for _, chart := range []string{Reloader, ReloaderUBI} {
		for _, s := range []setup{{name: "default"}, {name: "OpenShift", openshift: true}, {name: "HA", replicas: 3}} {
			t.Run(chart+"/"+s.name, func(t *testing.T) {
				d := deployment(t, render(t, chart, Release{Name: "rel", Namespace: "ops", Values: s.values(), KubeVersion: version}))
				if res := restricted(t, &d.Spec.Template); !res.Allowed {
					t.Errorf("pod violates restricted: %s: %s", res.ForbiddenReason(), res.ForbiddenDetail())
				}
				if err := dryRunPod(t, enforcingNamespace(t), &d.Spec.Template); err != nil {
					t.Errorf("apiserver enforcing restricted rejects the pod: %v", err)
				}
			})
		}
	}
}

// allowPrivilegeEscalation: true fails "restricted", and the failure names it.
func TestPrivilegeEscalationFailsRestrictedPodSecurityNamingIt(t *testing.T) {
	needControlPlane(t)
	version, _ := serverVersion(t)
	vals := values(map[string]any{"reloader.deployment.containerSecurityContext.allowPrivilegeEscalation": true})
	d := deployment(t, render(t, Reloader, Release{Name: "rel", Namespace: "ops", Values: vals, KubeVersion: version}))

	res := restricted(t, &d.Spec.Template)
	if res.Allowed {
		t.Fatal("pod with allowPrivilegeEscalation=true passes restricted")
	}
	if !strings.Contains(res.ForbiddenReason(), "allowPrivilegeEscalation != false") {
		t.Errorf("restricted rejects the pod for %q, want the reason to name allowPrivilegeEscalation", res.ForbiddenReason())
	}
	err := dryRunPod(t, enforcingNamespace(t), &d.Spec.Template)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "allowPrivilegeEscalation") {
		t.Errorf("apiserver enforcing restricted: got %v, want Forbidden naming allowPrivilegeEscalation", err)
	}
}

// OpenShift mode leaves runAsUser to the restricted-v2 SCC but keeps the
// pod non-root; the default pins 65534.
func TestOpenShiftModeLeavesRunAsUserToTheSCC(t *testing.T) {
	for _, s := range []setup{{name: "default"}, {name: "OpenShift", openshift: true}} {
		sc := deployment(t, render(t, Reloader, Release{Name: "rel", Namespace: "ops", Values: s.values()})).Spec.Template.Spec.SecurityContext
		if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("%s: pod securityContext %+v does not require a non-root user", s.name, sc)
			continue
		}
		switch {
		case s.openshift && sc.RunAsUser != nil:
			t.Errorf("OpenShift mode sets runAsUser %d; the SCC must assign it", *sc.RunAsUser)
		case !s.openshift && (sc.RunAsUser == nil || *sc.RunAsUser != 65534):
			t.Errorf("default pod runAsUser is %v, want 65534", sc.RunAsUser)
		}
	}
}

// readOnlyRootFileSystem (the default) makes the root read-only and gives the
// process a writable /tmp.
func TestReadOnlyRootGetsWritableTmp(t *testing.T) {
	for _, readOnly := range []bool{true, false} {
		d := deployment(t, render(t, Reloader, Release{Name: "rel", Namespace: "ops", Values: values(map[string]any{"reloader.readOnlyRootFileSystem": readOnly})}))
		c := d.Spec.Template.Spec.Containers[0]
		gotRO := c.SecurityContext != nil && c.SecurityContext.ReadOnlyRootFilesystem != nil && *c.SecurityContext.ReadOnlyRootFilesystem
		gotTmp := len(c.VolumeMounts) == 1 && c.VolumeMounts[0].MountPath == "/tmp" &&
			len(d.Spec.Template.Spec.Volumes) == 1 && d.Spec.Template.Spec.Volumes[0].EmptyDir != nil
		if gotRO != readOnly || gotTmp != readOnly {
			t.Errorf("readOnlyRootFileSystem=%v: read-only root %v, emptyDir at /tmp %v", readOnly, gotRO, gotTmp)
		}
	}
}

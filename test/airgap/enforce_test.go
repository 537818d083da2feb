package airgap_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/internal/exitcode"
	"github.com/reloader-dev/reloader/test/controlplane"
)

// enforce runs `reloader-mirror policy` for registry B and applies its
// ValidatingAdmissionPolicy before the chart is installed: the install that
// follows must be admitted under it, and the test shows the policy has teeth
// (a tag and another registry are denied, naming the container and image).
func (d *drill) enforce() error {
	d.policyDir = filepath.Join(d.work, "policies")
	if _, err := d.mustMirror("keep it that way: admit only digest-pinned images from the mirror (--mode audit first, then enforce)", "",
		"policy", "-f", d.archive, "--key", d.pubKey, "--target", d.regB.Host+"/platform/reloader",
		"--namespace", "reloader", "--format", "vap", "--mode", "enforce", "--output", d.policyDir); err != nil {
		return err
	}
	admin, err := controlplaneClient()
	if err != nil {
		return err
	}
	if err := applyVAP(d, admin, filepath.Join(d.policyDir, "vap.yaml")); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "reloader"}}
	if _, err := admin.CoreV1().Namespaces().Create(d.ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	// The apiserver picks a new policy up asynchronously: wait until it
	// denies, so the admitted install below is admitted under it.
	for _, image := range []string{"ghcr.io/stakater/reloader:v1.4.21", "quay.io/other/reloader@sha256:" + strings.Repeat("0", 64)} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := dryRunDeployment(d, admin, image)
			if err != nil && strings.Contains(err.Error(), image) {
				d.t.Logf("denied as it should be: %v", err)
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("a Deployment running %s in namespace reloader was not denied by the policy (last answer: %v)", image, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// The operator's proof, and the auditor's: the release admitted, a tag,
	// another registry and an unlisted digest denied, by this policy.
	kubeconfig := filepath.Join(d.work, "admin.kubeconfig")
	if err := controlplane.WriteKubeconfig(cp.Admin, kubeconfig); err != nil {
		return err
	}
	res, err := d.mustMirror("prove it on the cluster: dry-run Pods, the release admitted and everything else denied", "",
		"policy", "check", "-f", d.archive, "--key", d.pubKey, "--target", d.regB.Host+"/platform/reloader",
		"--namespace", "reloader", "--kubeconfig", kubeconfig)
	if err != nil {
		return err
	}
	// Three bad cases for each of the four variants (standard, ubi, fips, ubi-fips).
	if !strings.Contains(res.Stdout, "The policies hold") || strings.Count(res.Stdout, "by ValidatingAdmissionPolicy ") != 3*4 {
		return fmt.Errorf("policy check did not show each bad case denied by the policy:\n%s", res.Stdout)
	}
	d.policyKubeconfig = kubeconfig
	return nil
}

// policiesRemoved takes the policy away and shows policy check failing
// with exit 3, naming what was admitted: the check is not a formality.
func (d *drill) policiesRemoved() error {
	admin, err := controlplaneClient()
	if err != nil {
		return err
	}
	if err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().DeleteCollection(d.ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return err
	}
	if err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().DeleteCollection(d.ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return err
	}
	args := []string{"policy", "check", "-f", d.archive, "--key", d.pubKey, "--target", d.regB.Host + "/platform/reloader",
		"--namespace", "reloader", "--kubeconfig", d.policyKubeconfig, "-o", "json"}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := d.runMirror("", false, "", args...)
		if err != nil {
			return err
		}
		if res.Code == int(exitcode.Refused) && strings.Contains(res.Stderr, "was admitted") && strings.Contains(res.Stdout, `"holds": false`) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("policy check without the policies: exit %d, want 3\n%s\n%s", res.Code, res.Stdout, tail(res.Stderr))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func dryRunDeployment(d *drill, admin kubernetes.Interface, image string) error {
	labels := map[string]string{"app": "probe"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "probe"}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: image}}}}}}
	_, err := admin.AppsV1().Deployments("reloader").Create(d.ctx, dep, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	return err
}

// applyVAP creates the policy and binding `reloader-mirror policy` wrote,
// as `kubectl apply -f` would.
func applyVAP(d *drill, admin kubernetes.Interface, file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	dec := utilyaml.NewYAMLReader(bufioReader(data))
	applied := 0
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", file, err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return fmt.Errorf("reading %s: %w", file, err)
		}
		switch meta.Kind {
		case "":
			continue
		case "ValidatingAdmissionPolicy":
			var p admissionv1.ValidatingAdmissionPolicy
			if err := yaml.UnmarshalStrict(doc, &p); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(d.ctx, &p, metav1.CreateOptions{}); err != nil {
				return err
			}
		case "ValidatingAdmissionPolicyBinding":
			var b admissionv1.ValidatingAdmissionPolicyBinding
			if err := yaml.UnmarshalStrict(doc, &b); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			if _, err := admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(d.ctx, &b, metav1.CreateOptions{}); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: unexpected %s", file, meta.Kind)
		}
		applied++
	}
	if applied != 2 {
		return fmt.Errorf("%s holds %d objects, want a policy and its binding", file, applied)
	}
	return nil
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

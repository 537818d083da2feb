package admission_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/test/process"
	"github.com/reloader-dev/reloader/test/tools"
)

// servingCert is a test CA and a serving certificate it issued for
// 127.0.0.1 and the names policy-controller's certificate controller checks.
func servingCert(t *testing.T, ns string) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "policy-controller test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * 24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "webhook." + ns + ".svc"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * 24 * time.Hour),
		DNSNames:    []string{"webhook", "webhook." + ns, "webhook." + ns + ".svc", "webhook." + ns + ".svc.cluster.local"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

// policyControllerWebhook runs policy-controller's webhook (its knative
// sharedmain binary) against the test apiserver with its system namespace,
// configuration and serving certificate in place, and registers its pod
// validation as a URL webhook on loopback (failurePolicy Fail) for the
// test namespace. It returns the system namespace.
func policyControllerWebhook(t *testing.T, ctx context.Context, k *kube, testNS string) string {
	t.Helper()
	bin, err := tools.Binary(ctx, tools.PolicyController, "policy-controller")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cp.Admin)
	if err != nil {
		t.Fatal(err)
	}
	sys := cp.Namespace(t)
	caPEM, certPEM, keyPEM := servingCert(t, sys)
	if _, err := cs.CoreV1().Secrets(sys).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "webhook-certs"},
		Data: map[string][]byte{"ca-cert.pem": caPEM, "server-cert.pem": certPEM, "server-key.pem": keyPEM}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := moduleDir(t, policyControllerModule)
	for _, f := range []string{"config-logging.yaml", "config-observability.yaml", "config-policy-controller.yaml", "config-leader-election.yaml", "config-image-policies.yaml", "config-sigstore-keys.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, "config", f))
		if err != nil {
			t.Fatal(err)
		}
		var cm corev1.ConfigMap
		if err := yaml.Unmarshal(b, &cm); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cm.Namespace = sys
		if cm.Name == "config-policy-controller" {
			// An image no ClusterImagePolicy matches is denied: the
			// setting docs/enforce.md tells users to choose.
			cm.Data = map[string]string{"no-match-policy": "deny"}
		}
		if _, err := cs.CoreV1().ConfigMaps(sys).Create(ctx, &cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	ports := make([]int, 3)
	for i := range ports {
		if ports[i], err = process.FreePort(); err != nil {
			t.Fatal(err)
		}
	}
	// v0.13.1 copies its webhook options into the context before parsing
	// --secure-port, so the flag has no effect: it serves on 8443.
	ports[0] = 8443
	home := t.TempDir()
	p, err := process.Start(process.Options{Name: "policy-controller", Path: bin, Dir: t.TempDir(),
		Args: []string{"--secure-port=" + strconv.Itoa(ports[0]), "--disable-tuf",
			// Its own webhook configurations are named so none exists: the
			// knative reconcilers would rewrite a configuration they find
			// to point at an in-cluster Service.
			"--webhook-name=policy.sigstore.dev." + sys, "--mutating-webhook-name=defaulting." + sys, "--validating-webhook-name=validating." + sys},
		Env: append([]string{"KUBECONFIG=" + cp.AdminKubeconfig, "SYSTEM_NAMESPACE=" + sys, "CONFIG_LOGGING_NAME=config-logging", "METRICS_DOMAIN=sigstore.dev/policy",
			"WEBHOOK_NAME=webhook", "KUBERNETES_MIN_VERSION=1.21.0", "HOME=" + home, "TUF_ROOT=" + filepath.Join(home, "tuf"),
			"PROFILING_PORT=" + strconv.Itoa(ports[1]), "METRICS_PROMETHEUS_PORT=" + strconv.Itoa(ports[2])}, refusingProxy...)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("policy-controller log:\n%s", p.Tail(80))
		}
		_ = p.Stop(5 * time.Second)
	})
	fail := "Fail"
	vwc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
		"metadata": map[string]any{"name": "policy-controller-" + sys},
		"webhooks": []any{map[string]any{
			"name":                    "policy.sigstore.dev",
			"admissionReviewVersions": []any{"v1"},
			"sideEffects":             "None",
			"failurePolicy":           fail,
			"timeoutSeconds":          int64(30),
			"clientConfig": map[string]any{
				"url":      fmt.Sprintf("https://127.0.0.1:%d/validations", ports[0]),
				"caBundle": caPEM,
			},
			"rules": []any{map[string]any{"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"CREATE", "UPDATE"},
				"resources": []any{"pods"}, "scope": "Namespaced"}},
			"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": testNS, pcIncludeLabel: "true"}},
		}},
	}}
	if err := k.apply(ctx, vwc, false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.delete(vwc) })
	return sys
}

const pcIncludeLabel = "policy.sigstore.dev/include"

// webhookWhy is how the webhook words each reason policy-tester gives: it
// names the failed ClusterImagePolicy, and denies an image by tag before it
// looks for a policy at all.
var webhookWhy = map[string]string{
	notSigned:  `failed policy: rm-(signature|sbom)`,
	noSBOM:     `failed policy: rm-sbom`,
	notCovered: `must be an image digest|no matching policies`,
}

// The same policies and images as TestPolicyControllerEvaluatesTheGeneratedPolicies,
// decided by policy-controller running as the test apiserver's admission
// webhook (failurePolicy Fail): server-side dry-run Pods in a namespace
// labelled for it are admitted or denied by the apiserver.
func TestPolicyControllerWebhookAdmitsOnlyTheMirroredRelease(t *testing.T) {
	t.Parallel()
	needControlPlane(t)
	for _, tc := range []struct {
		name    string
		fixture func(*testing.T, context.Context) *engineFixture
	}{
		{"key", keyedFixture},
		{"keyless with log entries", keylessFixture},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			f := tc.fixture(t, ctx)
			k := newKube(t, cp.Admin)
			installCRDs(t, ctx, k)
			ns := cp.Namespace(t)
			nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
				"metadata": map[string]any{"name": ns, "labels": map[string]any{pcIncludeLabel: "true"}}}}
			if err := k.apply(ctx, nsObj, false); err != nil {
				t.Fatal(err)
			}
			policyControllerWebhook(t, ctx, k, ns)
			for _, obj := range decode(t, f.policy) {
				// policy-controller's conversion webhook is the running
				// binary's, which it points at an in-cluster Service; the
				// storage version, whose schema is the same, needs none.
				if obj.GetKind() == "ClusterImagePolicy" {
					obj.SetAPIVersion("policy.sigstore.dev/v1alpha1")
				}
				if err := k.apply(ctx, obj, false); err != nil {
					t.Fatalf("applying %s %s: %v", obj.GetKind(), obj.GetName(), err)
				}
				t.Cleanup(func() { k.delete(obj) })
			}
			first := f.cases[0]
			var last error
			if err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
				last = k.apply(ctx, pod(ns, "probe", map[string]string{"app": first.image}, nil), true)
				return last == nil, nil
			}); err != nil {
				t.Fatalf("policy-controller never admitted %s: last answer: %v", first.name, last)
			}
			for i, c := range f.cases {
				t.Run(c.name, func(t *testing.T) {
					err := k.apply(ctx, pod(ns, fmt.Sprintf("p%d", i), map[string]string{"app": c.image}, nil), true)
					switch {
					case c.admit && err != nil:
						t.Errorf("%s denied: %v", c.image, err)
					case !c.admit && err == nil:
						t.Errorf("%s admitted\npolicy:\n%s", c.image, f.policy)
					case !c.admit && !regexp.MustCompile(webhookWhy[c.why]).MatchString(err.Error()):
						t.Errorf("%s denied, but not for the reason wanted (%s): %v", c.image, webhookWhy[c.why], err)
					default:
						t.Logf("%s: %v", c.image, err)
					}
				})
			}
		})
	}
}

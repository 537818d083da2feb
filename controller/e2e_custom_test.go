package controller_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

var crdOnce sync.Once

// installCRDs installs minimal CRDs for Argo Rollouts, OpenShift
// DeploymentConfigs and Secrets Store CSI: the controller only needs the
// apiserver to serve them, not their operators.
func installCRDs(t *testing.T) dynamic.Interface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cp.Admin)
	if err != nil {
		t.Fatal(err)
	}
	crdOnce.Do(func() {
		ctx := context.Background()
		crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
		for _, d := range []struct{ group, version, kind, plural string }{
			{"argoproj.io", "v1alpha1", "Rollout", "rollouts"},
			{"apps.openshift.io", "v1", "DeploymentConfig", "deploymentconfigs"},
			{"secrets-store.csi.x-k8s.io", "v1", "SecretProviderClass", "secretproviderclasses"},
			{"secrets-store.csi.x-k8s.io", "v1", "SecretProviderClassPodStatus", "secretproviderclasspodstatuses"},
		} {
			crd := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
				"metadata": map[string]any{"name": d.plural + "." + d.group},
				"spec": map[string]any{
					"group": d.group, "scope": "Namespaced",
					"names": map[string]any{"kind": d.kind, "plural": d.plural, "singular": strings.ToLower(d.kind), "listKind": d.kind + "List"},
					"versions": []any{map[string]any{"name": d.version, "served": true, "storage": true,
						"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
				},
			}}
			if _, err := dyn.Resource(crds).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
				t.Fatalf("installing CRD %s: %v", d.plural, err)
			}
		}
	})
	cs := cp.AdminClient(t)
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		for _, gv := range []string{"argoproj.io/v1alpha1", "apps.openshift.io/v1", "secrets-store.csi.x-k8s.io/v1"} {
			if _, err := cs.Discovery().ServerResourcesForGroupVersion(gv); err != nil {
				return false, gv + " not served yet: " + err.Error()
			}
		}
		return true, ""
	})
	return dyn
}

var (
	rolloutGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}
	dcGVR      = schema.GroupVersionResource{Group: "apps.openshift.io", Version: "v1", Resource: "deploymentconfigs"}
	spcGVR     = schema.GroupVersionResource{Group: "secrets-store.csi.x-k8s.io", Version: "v1", Resource: "secretproviderclasses"}
	spcpsGVR   = schema.GroupVersionResource{Group: "secrets-store.csi.x-k8s.io", Version: "v1", Resource: "secretproviderclasspodstatuses"}
)

func customWorkload(t *testing.T, apiVersion, kind, name string, ann map[string]string, tmpl corev1.PodTemplateSpec) *unstructured.Unstructured {
	t.Helper()
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&tmpl)
	if err != nil {
		t.Fatal(err)
	}
	annAny := map[string]any{}
	for k, v := range ann {
		annAny[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "annotations": annAny},
		"spec":     map[string]any{"replicas": int64(1), "template": raw},
	}}
}

func customEnv(t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns, name, variable string) (string, *unstructured.Unstructured) {
	t.Helper()
	u, err := dyn.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		env, _, _ := unstructured.NestedSlice(c.(map[string]any), "env")
		for _, e := range env {
			m := e.(map[string]any)
			if m["name"] == variable {
				v, _ := m["value"].(string)
				return v, u
			}
		}
	}
	return "", u
}

// Argo Rollouts: the default "rollout" strategy changes the template; the
// "restart" strategy sets spec.restartAt and leaves the template alone.
func TestArgoRollouts(t *testing.T) {
	requireControlPlane(t)
	dyn := installCRDs(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("cfg", map[string]string{"k": "1"}))
	restart := auto()
	restart["reloader.stakater.com/rollout-strategy"] = "restart"
	for name, ann := range map[string]map[string]string{"by-template": auto(), "by-restart": restart} {
		if _, err := dyn.Resource(rolloutGVR).Namespace(ns).Create(ctx, customWorkload(t, "argoproj.io/v1alpha1", "Rollout", name, ann, usesConfigMap(name, "cfg")), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r := startReloader(t, "", "--namespaces="+ns, "--is-Argo-Rollouts=true")
	r.waitIdle(t, 2)
	updateConfigMapData(t, cs, ns, "cfg", map[string]string{"k": "2"})
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		v, _ := customEnv(t, dyn, rolloutGVR, ns, "by-template", "STAKATER_CFG_CONFIGMAP")
		_, u := customEnv(t, dyn, rolloutGVR, ns, "by-restart", "STAKATER_CFG_CONFIGMAP")
		at, _, _ := unstructured.NestedString(u.Object, "spec", "restartAt")
		return v != "" && at != "", fmt.Sprintf("template variable %q, restartAt %q", v, at)
	})
	if v, _ := customEnv(t, dyn, rolloutGVR, ns, "by-restart", "STAKATER_CFG_CONFIGMAP"); v != "" {
		t.Fatal("the restart strategy must not change the template")
	}
}

// OpenShift DeploymentConfigs are reloaded when the API is served, without a
// flag.
func TestDeploymentConfigsWhenTheAPIExists(t *testing.T) {
	requireControlPlane(t)
	dyn := installCRDs(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, reloadertest.Secret("db", map[string]string{"p": "1"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tmpl := reloadertest.PodTemplate("legacy", corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromSecret("db")}})
	if _, err := dyn.Resource(dcGVR).Namespace(ns).Create(ctx, customWorkload(t, "apps.openshift.io/v1", "DeploymentConfig", "legacy", auto(), tmpl), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := startReloader(t, "", "--namespaces="+ns)
	r.waitIdle(t, 1)
	if _, err := cs.CoreV1().Secrets(ns).Update(ctx, reloadertest.Secret("db", map[string]string{"p": "2"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		v, _ := customEnv(t, dyn, dcGVR, ns, "legacy", "STAKATER_DB_SECRET")
		return v == hashOfSecret(map[string]string{"p": "2"}), "DeploymentConfig not reloaded: STAKATER_DB_SECRET=" + v
	})
}

// Secrets Store CSI: when the mounts of a SecretProviderClass report new
// object versions, the workloads mounting it reload once.
func TestCSISecretProviderClass(t *testing.T) {
	requireControlPlane(t)
	dyn := installCRDs(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	created := csiClass(t, dyn, ns, "vault-db", "api-pod-1")
	tmpl := mountsClass("api", "app", "vault-db")
	createDeployment(t, cs, ns, reloadertest.Deployment("api", map[string]string{"secretproviderclass.reloader.stakater.com/auto": "true"}, tmpl))
	r := startReloader(t, "", "--namespaces="+ns, "--enable-csi-integration")
	waitRecorded(t, cs, ns, "api")
	r.waitIdle(t, 1)
	if rev := revision(t, cs, ns, "api"); rev != 1 {
		t.Fatalf("adoption rolled the Deployment (revision %d)", rev)
	}
	next := spcPodStatus(ns, "vault-db", "api-pod-1", "2")
	next.SetResourceVersion(created.GetResourceVersion())
	if _, err := dyn.Resource(spcpsGVR).Namespace(ns).Update(ctx, next, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitRevision(t, cs, ns, "api", 2, 500*time.Millisecond)
	d := getDeployment(t, cs, ns, "api")
	if v, _ := reloadertest.EnvOf(d, "app", "STAKATER_VAULT_DB_SECRETPROVIDERCLASS"); v == "" {
		t.Fatal("the container mounting the class lacks STAKATER_VAULT_DB_SECRETPROVIDERCLASS")
	}
}

// receiver is a local HTTP endpoint that records what it is sent and fails
// the first few requests.
type receiver struct {
	mu       sync.Mutex
	failures int
	bodies   []string
	srv      *httptest.Server
}

func newReceiver(t *testing.T, failures int) *receiver {
	r := &receiver{failures: failures}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.failures > 0 {
			r.failures--
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		r.bodies = append(r.bodies, string(b))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) received() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bodies...)
}

// Alerts: a reload is announced to a Slack-format receiver that fails three
// times before accepting; the message names the workload and the resource,
// and neither the value nor the webhook URL appears in the controller's log.
func TestAlertAfterReload(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	rcv := newReceiver(t, 3)
	hook := rcv.srv.URL + "/services/T000/B000/very-secret-token"
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("cfg", map[string]string{"k": "value-one"}))
	createDeployment(t, cs, ns, reloadertest.Deployment("web", auto(), usesConfigMap("web", "cfg")))
	r := startReloaderEnv(t, "", []string{"ALERT_ON_RELOAD=true", "ALERT_SINK=slack", "ALERT_WEBHOOK_URL=" + hook}, "--namespaces="+ns)
	waitRecorded(t, cs, ns, "web")
	updateConfigMapData(t, cs, ns, "cfg", map[string]string{"k": "value-two"})
	waitRevision(t, cs, ns, "web", 2, 0)
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		return len(rcv.received()) == 1, fmt.Sprintf("%d alerts received", len(rcv.received()))
	})
	body := rcv.received()[0]
	for _, want := range []string{"web", "cfg", ns, "attachments"} {
		if !strings.Contains(body, want) {
			t.Errorf("alert %s lacks %q", body, want)
		}
	}
	if strings.Contains(body, "value-two") {
		t.Error("the alert carries the ConfigMap's value")
	}
	if log := r.Tail(400); strings.Contains(log, "very-secret-token") {
		t.Error("the webhook URL appears in the controller's log")
	}
}

// --webhook-url: the change is sent to the webhook instead of rolling the
// workload, once per change.
func TestWebhookModeNotifiesInsteadOfReloading(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	rcv := newReceiver(t, 0)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("cfg", map[string]string{"k": "1"}))
	createDeployment(t, cs, ns, reloadertest.Deployment("web", auto(), usesConfigMap("web", "cfg")))
	r := startReloader(t, "", "--namespaces="+ns, "--webhook-url="+rcv.srv.URL+"/hook")
	waitRecorded(t, cs, ns, "web")
	updateConfigMapData(t, cs, ns, "cfg", map[string]string{"k": "2"})
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		return len(rcv.received()) == 1, fmt.Sprintf("%d webhooks received", len(rcv.received()))
	})
	r.waitIdle(t, 2)
	time.Sleep(500 * time.Millisecond)
	if n := len(rcv.received()); n != 1 {
		t.Fatalf("%d webhooks for one change, want 1", n)
	}
	var payload struct {
		Workload  struct{ Kind, Namespace, Name string }
		Resources []struct{ Kind, Name string }
	}
	if err := json.Unmarshal([]byte(rcv.received()[0]), &payload); err != nil {
		t.Fatalf("webhook payload %s: %v", rcv.received()[0], err)
	}
	if payload.Workload.Name != "web" || payload.Workload.Kind != "Deployment" || len(payload.Resources) != 1 || payload.Resources[0].Name != "cfg" {
		t.Fatalf("payload %+v does not identify the workload and resource", payload)
	}
	if rev := revision(t, cs, ns, "web"); rev != 1 {
		t.Fatalf("webhook mode rolled the workload (revision %d)", rev)
	}
}

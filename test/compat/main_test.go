package compat

import (
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/charts"
	"github.com/reloader-dev/reloader/test/chartrun"
	"github.com/reloader-dev/reloader/test/controlplane"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// One control plane for the package; the tests do not run in parallel, so
// cluster-scoped objects (CRDs, admission policies) are installed when a
// test needs them and nothing else sees them first.
var cp *controlplane.ControlPlane

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	os.Exit(controlplane.RunTests(m, controlplane.Options{}, &cp))
}

func needControlPlane(t *testing.T) {
	t.Helper()
	if cp == nil {
		t.Skip("needs the real control plane; not started in -short mode")
	}
	cp.LogsOnFailure(t)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// fixture reads a values file from testdata, as `helm -f` would.
func fixture(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{}
	if err := yaml.Unmarshal(b, &vals); err != nil {
		t.Fatalf("testdata/%s: %v", name, err)
	}
	return vals
}

func render(t *testing.T, rel charts.Release) []*unstructured.Unstructured {
	t.Helper()
	objs, err := charts.RenderObjects(charts.Reloader, rel)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	return charts.OfKind(objs, kind)
}

// deploymentOf is the one Deployment a chart renders, typed.
func deploymentOf(t *testing.T, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	d, err := charts.DeploymentOf(objs)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
	buildDir  string
)

// controllerBinary is built once per package run.
func controllerBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "compat-reloader-")
		if buildErr == nil {
			binary, buildErr = chartrun.Build(context.Background(), buildDir)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// runAsChart applies the chart's RBAC for rel, then runs the controller with
// the rendered Deployment's args and env under the chart's ServiceAccount.
func runAsChart(t *testing.T, ctx context.Context, rel charts.Release, extraArgs ...string) *chartrun.Controller {
	t.Helper()
	sa, err := charts.ApplyRBAC(ctx, cp.Admin, charts.Reloader, rel)
	if err != nil {
		t.Fatal(err)
	}
	return runDeployment(t, ctx, deploymentOf(t, render(t, rel)), rel.Namespace, sa, extraArgs...)
}

// runDeployment runs the controller d defines under ServiceAccount sa.
func runDeployment(t *testing.T, ctx context.Context, d *appsv1.Deployment, ns, sa string, extraArgs ...string) *chartrun.Controller {
	t.Helper()
	cfg, err := cp.ServiceAccountConfig(ctx, ns, sa)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := controlplane.WriteKubeconfig(cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	c, err := chartrun.Start(ctx, chartrun.Options{Binary: controllerBinary(t), Deployment: d, Kubeconfig: kubeconfig,
		PodNamespace: ns, ExtraArgs: extraArgs, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("reloader %v\n%s", c.Args, c.Tail(80))
		}
	})
	return c
}

// scrape returns every sample of /metrics as "name{l1="v1",...}" -> value,
// labels sorted; histograms as name_count and name_sum.
func scrape(t *testing.T, c *chartrun.Controller) map[string]float64 {
	t.Helper()
	resp, err := http.Get(c.MetricsURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			key := func(n string) string { return n + labelString(m.GetLabel()) }
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				out[key(name)] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key(name)] = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				out[key(name+"_count")] = float64(m.GetHistogram().GetSampleCount())
				out[key(name+"_sum")] = m.GetHistogram().GetSampleSum()
			case dto.MetricType_UNTYPED:
				out[key(name)] = m.GetUntyped().GetValue()
			}
		}
	}
	return out
}

func labelString(ls []*dto.LabelPair) string {
	if len(ls) == 0 {
		return ""
	}
	parts := make([]string, 0, len(ls))
	for _, l := range ls {
		parts = append(parts, l.GetName()+"="+`"`+l.GetValue()+`"`)
	}
	// client_golang writes labels sorted by name already.
	return "{" + strings.Join(parts, ",") + "}"
}

// sum adds the samples of a name whose labels include every pair of want.
func sum(samples map[string]float64, name string, want ...string) (float64, bool) {
	total, found := 0.0, false
	for k, v := range samples {
		n, labels, _ := strings.Cut(k, "{")
		if n != name {
			continue
		}
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains("{"+labels, w)
		}
		if ok {
			total += v
			found = true
		}
	}
	return total, found
}

// ---- workloads the controller reloads ----

func configMap(name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
}

// autoDeployment uses ConfigMap cm through envFrom and opts in with
// reloader.stakater.com/auto.
func autoDeployment(name, cm string, labels map[string]string) *appsv1.Deployment {
	sel := map[string]string{"app": name}
	meta := map[string]string{"app": name}
	for k, v := range labels {
		meta[k] = v
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: meta, Annotations: map[string]string{"reloader.stakater.com/auto": "true"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "app", Image: "registry.invalid/app:1",
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}},
			}}}},
		},
	}
}

func envValue(d *appsv1.Deployment, name string) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}

// waitAdopted waits until the controller has recorded its baseline on the
// Deployment, so a later change is a change and not the first sight.
func waitAdopted(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	reloadertest.Eventually(t, time.Minute, func() (bool, string) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, ok := d.Annotations["reloader.dev/applied-hashes"]
		return ok, "the controller never adopted Deployment " + ns + "/" + name
	})
}

// waitReloaded waits until Deployment name carries the reload variable of
// ConfigMap cm.
func waitReloaded(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns, name, variable string) {
	t.Helper()
	reloadertest.Eventually(t, time.Minute, func() (bool, string) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return envValue(d, variable) != "", "Deployment " + ns + "/" + name + " was not reloaded (no " + variable + ")"
	})
}

package charts

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/test/chartrun"
	"github.com/reloader-dev/reloader/test/controlplane"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

// The chart's RBAC is enough for the controller to do its job, and the flags
// and environment the chart renders are ones the controller accepts: the real
// binary runs with the rendered container arguments and env, authenticated as
// the chart's ServiceAccount, and reloads a Deployment in a watched namespace.
func TestControllerRunsWithTheChartsServiceAccountAndReloads(t *testing.T) {
	needControlPlane(t)
	ctx := testContext(t)
	admin := cp.AdminClient(t)
	release := cp.Namespace(t)
	watched := cp.Namespace(t)
	rel := Release{Name: "reloader", Namespace: release, KubeVersion: mustVersion(t),
		Values: values(map[string]any{"reloader.watchGlobally": false, "reloader.namespaces": []any{watched}})}

	sa, err := ApplyRBAC(ctx, cp.Admin, Reloader, rel)
	if err != nil {
		t.Fatal(err)
	}
	saCfg, err := cp.ServiceAccountConfig(ctx, release, sa)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := controlplane.WriteKubeconfig(saCfg, kubeconfig); err != nil {
		t.Fatal(err)
	}

	// A metadata ConfigMap left by an earlier install: the controller must
	// read and update it with the rights the chart grants by name.
	stale := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "reloader-meta-info"}, Data: map[string]string{"stale": "true"}}
	if _, err := admin.CoreV1().ConfigMaps(release).Create(ctx, stale, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	d := deployment(t, render(t, Reloader, rel))
	bin := buildReloader(t)
	p, err := chartrun.Start(ctx, chartrun.Options{Binary: bin, Deployment: d, Kubeconfig: kubeconfig, PodNamespace: release, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("reloader %v\n%s", p.Args, p.Tail(60))
		}
	})

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"k": "1"}}
	if _, err := admin.CoreV1().ConfigMaps(watched).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	web := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"reloader.stakater.com/auto": "true"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "web", Image: "registry.invalid/web:1",
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}},
			}}}},
		},
	}
	if _, err := admin.AppsV1().Deployments(watched).Create(ctx, web, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		got, err := admin.AppsV1().Deployments(watched).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, ok := got.Annotations["reloader.dev/applied-hashes"]
		return ok, "the controller has not adopted Deployment web"
	})
	cm.Data["k"] = "2"
	if _, err := admin.CoreV1().ConfigMaps(watched).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		got, err := admin.AppsV1().Deployments(watched).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range got.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "STAKATER_APP_CONFIGMAP" && e.Value != "" {
				return true, ""
			}
		}
		return false, "Deployment web was not reloaded"
	})
	// Workloads were patched (the chart grants no update on them) and the
	// metadata ConfigMap was updated through its name.
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		got, err := admin.CoreV1().ConfigMaps(release).Get(ctx, "reloader-meta-info", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, old := got.Data["stale"]
		return !old && len(got.Data) > 0, fmt.Sprintf("reloader-meta-info was not updated by the controller: %v", got.Data)
	})
}

func buildReloader(t *testing.T) string {
	t.Helper()
	bin, err := chartrun.Build(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func mustVersion(t *testing.T) string {
	v, _ := serverVersion(t)
	return v
}

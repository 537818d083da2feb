package charts

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

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

	// A metadata ConfigMap left by an earlier install: the controller must
	// read and update it with the rights the chart grants by name.
	stale := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "reloader-meta-info"}, Data: map[string]string{"stale": "true"}}
	if _, err := admin.CoreV1().ConfigMaps(release).Create(ctx, stale, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	startUnderChartRBAC(t, rel)

	webReloadsOnItsConfigMap(ctx, t, admin, watched, map[string]string{"k": "1"}, "k", corev1.Container{Name: "web", Image: "registry.invalid/web:1",
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}})
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

// With ignoreJobs=true Jobs are no workload of the controller's, but CronJobs
// still are: the real binary, run with the flags and RBAC the chart renders
// for ignoreJobs (create on jobs and nothing else), reloads a CronJob by
// creating its Job, and needs no other right on Jobs to get there.
func TestControllerReloadsCronJobsWithIgnoreJobsUnderTheChartsRBAC(t *testing.T) {
	needControlPlane(t)
	ctx := testContext(t)
	admin := cp.AdminClient(t)
	release := cp.Namespace(t)
	watched := cp.Namespace(t)
	rel := Release{Name: "reloader", Namespace: release, KubeVersion: mustVersion(t),
		Values: values(map[string]any{"reloader.watchGlobally": false, "reloader.namespaces": []any{watched}, "reloader.ignoreJobs": true})}
	p := startUnderChartRBAC(t, rel)
	if !slices.Contains(p.Args, "--ignored-workload-types=jobs") {
		t.Fatalf("ignoreJobs=true ran the controller with %v, want --ignored-workload-types=jobs", p.Args)
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "nightly"}, Data: map[string]string{"k": "1"}}
	if _, err := admin.CoreV1().ConfigMaps(watched).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	suspend := true // only the reload may create Jobs
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "report", Annotations: map[string]string{"reloader.stakater.com/auto": "true"}},
		Spec: batchv1.CronJobSpec{
			Schedule: "0 3 * * *",
			Suspend:  &suspend,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name: "report", Image: "registry.invalid/report:1",
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nightly"}}}},
				}},
			}}}},
		},
	}
	created, err := admin.BatchV1().CronJobs(watched).Create(ctx, cj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var adopted string
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		got, err := admin.BatchV1().CronJobs(watched).Get(ctx, "report", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		adopted = got.Annotations["reloader.dev/applied-hashes"]
		return adopted != "", "the controller has not adopted CronJob report"
	})
	jobs := func() []batchv1.Job {
		l, err := admin.BatchV1().Jobs(watched).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l.Items
	}
	if n := len(jobs()); n != 0 {
		t.Fatalf("adopting CronJob report created %d Jobs", n)
	}

	cm.Data["k"] = "2"
	if _, err := admin.CoreV1().ConfigMaps(watched).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		n := len(jobs())
		return n == 1, fmt.Sprintf("%d Jobs in %s after the ConfigMap changed, want the one CronJob report's reload creates", n, watched)
	})
	job := jobs()[0]
	if len(job.OwnerReferences) != 1 || job.OwnerReferences[0].UID != created.UID {
		t.Errorf("Job %s is owned by %+v, want CronJob report", job.Name, job.OwnerReferences)
	}
	found := false
	for _, e := range job.Spec.Template.Spec.Containers[0].Env {
		found = found || e.Name == "STAKATER_NIGHTLY_CONFIGMAP" && e.Value != ""
	}
	if !found {
		t.Errorf("Job %s lacks STAKATER_NIGHTLY_CONFIGMAP: it is not the reload of CronJob report", job.Name)
	}
	// The reload is complete once the CronJob records the hash it applied.
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		got, err := admin.BatchV1().CronJobs(watched).Get(ctx, "report", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return got.Annotations["reloader.dev/applied-hashes"] != adopted, "CronJob report does not record the reload"
	})
	if log := p.Tail(200); strings.Contains(strings.ToLower(log), "forbidden") {
		t.Errorf("the controller was refused a request under the chart's RBAC:\n%s", log)
	}
}

// With reloadOnUsedKeysOnly the real binary, under the chart's RBAC and
// with Secrets otherwise ignored (so only the fingerprint key's rules let it
// near a Secret), makes its fingerprint key in the release namespace, starts,
// and reloads a Deployment for the key it reads.
func TestControllerMakesItsFingerprintKeyUnderTheChartsRBAC(t *testing.T) {
	needControlPlane(t)
	ctx := testContext(t)
	admin := cp.AdminClient(t)
	release := cp.Namespace(t)
	watched := cp.Namespace(t)
	rel := Release{Name: "reloader", Namespace: release, KubeVersion: mustVersion(t),
		Values: values(map[string]any{"reloader.watchGlobally": false, "reloader.namespaces": []any{watched},
			"reloader.ignoreSecrets": true, "reloader.reloadOnUsedKeysOnly": true})}
	p := startUnderChartRBAC(t, rel)
	key, err := admin.CoreV1().Secrets(release).Get(ctx, fingerprintKeyName, metav1.GetOptions{})
	if err != nil || len(key.Data["key"]) != 32 {
		t.Fatalf("the controller made no 32-byte fingerprint key in %s: %v", release, err)
	}

	webReloadsOnItsConfigMap(ctx, t, admin, watched, map[string]string{"USED": "1", "OTHER": "1"}, "USED", corev1.Container{Name: "web", Image: "registry.invalid/web:1",
		Env: []corev1.EnvVar{{Name: "USED", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app"}, Key: "USED"}}}}})
	if log := p.Tail(200); strings.Contains(strings.ToLower(log), "forbidden") {
		t.Errorf("the controller was refused a request under the chart's RBAC:\n%s", log)
	}
}

// webReloadsOnItsConfigMap creates ConfigMap app with data in ns and a
// Deployment web whose one container (ctr) uses it, waits until the
// controller adopted web, changes key and waits for the reload.
func webReloadsOnItsConfigMap(ctx context.Context, t *testing.T, admin kubernetes.Interface, ns string, data map[string]string, key string, ctr corev1.Container) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: data}
	if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	web := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"reloader.stakater.com/auto": "true"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{ctr}}},
		},
	}
	if _, err := admin.AppsV1().Deployments(ns).Create(ctx, web, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		got, err := admin.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, ok := got.Annotations["reloader.dev/applied-hashes"]
		return ok, "the controller has not adopted Deployment web"
	})
	cm.Data[key] = "2"
	if _, err := admin.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		got, err := admin.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
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
}

// startUnderChartRBAC applies the chart's RBAC for rel and runs the real
// controller with the container arguments and env the chart renders,
// authenticated as the chart's ServiceAccount.
func startUnderChartRBAC(t *testing.T, rel Release) *chartrun.Controller {
	t.Helper()
	ctx := testContext(t)
	sa, err := ApplyRBAC(ctx, cp.Admin, Reloader, rel)
	if err != nil {
		t.Fatal(err)
	}
	saCfg, err := cp.ServiceAccountConfig(ctx, rel.Namespace, sa)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := controlplane.WriteKubeconfig(saCfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	d := deployment(t, render(t, Reloader, rel))
	bin := buildReloader(t)
	p, err := chartrun.Start(ctx, chartrun.Options{Binary: bin, Deployment: d, Kubeconfig: kubeconfig, PodNamespace: rel.Namespace, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Stop(10 * time.Second)
		if t.Failed() {
			t.Logf("reloader %v\n%s", p.Args, p.Tail(60))
		}
	})
	return p
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

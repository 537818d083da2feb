package explain_test

// End-to-end tests: the real reloader binary (controller and `explain`)
// against a real kube-apiserver and etcd on loopback, with RBAC on.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/reloader-dev/reloader/controller/explain"
	"github.com/reloader-dev/reloader/test/controlplane"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

var (
	cp          *controlplane.ControlPlane
	reloaderBin string
	pluginBin   string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "reloader-explain-bin-")
	if err == nil {
		reloaderBin, err = reloadertest.BuildBinary(false)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The kubectl plugin is the same binary under another name.
	pluginBin = filepath.Join(dir, "kubectl-reloader")
	if err := os.Symlink(reloaderBin, pluginBin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := controlplane.RunTests(m, controlplane.Options{}, &cp)
	os.RemoveAll(dir)
	os.Exit(code)
}

func requireControlPlane(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: needs the control plane (run without -short)")
	}
	cp.LogsOnFailure(t)
}

// controllerProc is a running controller.
type controllerProc struct {
	*reloadertest.Controller
	readyz string
}

// startController runs the controller scoped to ns, publishing its
// reloader-meta-info there, and waits for /readyz.
func startController(t *testing.T, ns string, args ...string) *controllerProc {
	t.Helper()
	return startControllerEnv(t, ns, nil, args...)
}

// startControllerEnv is startController with environment variables.
func startControllerEnv(t *testing.T, ns string, env []string, args ...string) *controllerProc {
	t.Helper()
	c := reloadertest.Start(t, reloadertest.Options{Binary: reloaderBin, Kubeconfig: cp.AdminKubeconfig, LogLines: 60,
		Args: append([]string{"--namespaces=" + ns}, args...), Env: append([]string{"RELOADER_NAMESPACE=" + ns}, env...)})
	return &controllerProc{Controller: c, readyz: c.MetricsURL + "/readyz"}
}

// result is one run of `explain`.
type result struct {
	code   int
	stdout string
	stderr string
}

// runExplain runs bin (reloader or kubectl-reloader) with args and the
// kubeconfig, in a clean environment.
func runExplain(t *testing.T, bin, kubeconfig string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if kubeconfig != "" {
		args = append(args, "--kubeconfig="+kubeconfig)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running %s: %v", bin, err)
	}
	return r
}

func reportOf(t *testing.T, r result) explain.Report {
	t.Helper()
	var rep explain.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("explain --output json printed no report (%v):\n%s\nstderr: %s", err, r.stdout, r.stderr)
	}
	return rep
}

func resourceOf(t *testing.T, rep explain.Report, kind, name string) explain.Resource {
	t.Helper()
	for _, r := range rep.Resources {
		if r.Kind == kind && r.Name == name {
			return r
		}
	}
	t.Fatalf("report has no %s %s: %+v", kind, name, rep.Resources)
	return explain.Resource{}
}

// waitRecorded waits until the controller has decided about a Deployment.
func waitRecorded(t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	reloadertest.WaitRecorded(t, cs, ns, name)
}

func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := controlplane.WriteKubeconfig(cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// ---- object builders ----

// configMap is explain's fixture ConfigMap: one key, annotations and labels
// as the case needs.
func configMap(name string, ann map[string]string, labels map[string]string) *corev1.ConfigMap {
	return reloadertest.ConfigMap(name, map[string]string{"k": "1"}, reloadertest.WithAnnotations(ann), reloadertest.WithLabels(labels))
}

func secret(name string) *corev1.Secret {
	return reloadertest.Secret(name, map[string]string{"password": "s3cret"})
}

// deployment builds a Deployment with meta annotations on its metadata and
// tmpl annotations on its pod template, whose container "app" uses what
// uses adds.
func deployment(name string, meta, tmpl map[string]string, uses ...func(*corev1.PodSpec)) *appsv1.Deployment {
	d := reloadertest.Deployment(name, meta, reloadertest.PodTemplate(name))
	d.Spec.Template.Annotations = tmpl
	for _, u := range uses {
		u(&d.Spec.Template.Spec)
	}
	return d
}

func envFromCM(name string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.Containers[0].EnvFrom = append(s.Containers[0].EnvFrom, reloadertest.EnvFromConfigMap(name))
	}
}

func envFromSecret(name string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.Containers[0].EnvFrom = append(s.Containers[0].EnvFrom, reloadertest.EnvFromSecret(name))
	}
}

func subPathCM(name, file string) func(*corev1.PodSpec) {
	return func(s *corev1.PodSpec) {
		s.Volumes = append(s.Volumes, corev1.Volume{Name: "cfg", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}})
		s.Containers[0].VolumeMounts = append(s.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "cfg", MountPath: "/etc/app/" + file, SubPath: file})
	}
}

func ann(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// Command demo is `make demo`: it starts a local control plane (etcd,
// kube-apiserver, kube-controller-manager, built from the Go module proxy on
// first use), runs the reloader controller against it, deploys a sample app
// that uses a ConfigMap and a Secret, changes the ConfigMap and shows the new
// ReplicaSet the reload rolled out.
//
// With --keep it leaves everything running and prints how to use kubectl.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/app"
	"github.com/reloader-dev/reloader/test/controlplane"

	"k8s.io/apimachinery/pkg/util/wait"
)

func main() {
	keep := flag.Bool("keep", os.Getenv("DEMO_KEEP") != "", "keep the control plane and controller running until interrupted")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func step(format string, args ...any) {
	fmt.Printf("\n==> "+format+"\n", args...)
}

// run is the demo as a newcomer reads it: one step after another, each
// printed as it happens, so it stays one function.
func run(ctx context.Context, keep bool) error {
	start := time.Now()
	step("starting a local control plane (first run builds it from the Go module proxy: several minutes)")
	cp, err := controlplane.Start(ctx, controlplane.Options{ControllerManager: true})
	if err != nil {
		return err
	}
	defer cp.Stop()
	fmt.Printf("    kube-apiserver %s, ready in %s\n", cp.URL(), time.Since(start).Round(time.Millisecond))
	cs, err := kubernetes.NewForConfig(cp.Admin)
	if err != nil {
		return err
	}

	step("starting the reloader controller (watching namespace demo)")
	o := app.DefaultOptions()
	o.Kubeconfig = cp.AdminKubeconfig
	o.MetricsAddr = "127.0.0.1:0"
	o.Namespaces = []string{"demo"}
	resolved, err := o.Resolve(func(string) string { return "" })
	if err != nil {
		return err
	}
	ctrlCtx, stopCtrl := context.WithCancel(ctx)
	defer stopCtrl()
	done := make(chan error, 1)
	go func() { done <- app.Run(ctrlCtx, o, resolved) }()

	step("deploying demo/web: a Deployment annotated reloader.stakater.com/auto=true, using ConfigMap web-config and Secret web-secret")
	cm, err := deployWeb(ctx, cs)
	if err != nil {
		return err
	}
	if err := waitFor(ctx, func() (bool, error) {
		d, err := cs.AppsV1().Deployments("demo").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, adopted := d.Annotations["reloader.dev/applied-hashes"]
		return adopted && d.Annotations["deployment.kubernetes.io/revision"] == "1", nil
	}); err != nil {
		return fmt.Errorf("waiting for the controller to adopt demo/web: %w", err)
	}
	d, _ := cs.AppsV1().Deployments("demo").Get(ctx, "web", metav1.GetOptions{})
	fmt.Printf("    adopted without a rollout; recorded %s=%s\n", "reloader.dev/applied-hashes", d.Annotations["reloader.dev/applied-hashes"])
	if err := printReplicaSets(ctx, cs); err != nil {
		return err
	}

	step("changing ConfigMap web-config (GREETING: hello -> bonjour)")
	changed := time.Now()
	cm.Data["GREETING"] = "bonjour"
	if _, err := cs.CoreV1().ConfigMaps("demo").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return err
	}
	if err := waitFor(ctx, func() (bool, error) {
		d, err := cs.AppsV1().Deployments("demo").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return d.Annotations["deployment.kubernetes.io/revision"] == "2", nil
	}); err != nil {
		return fmt.Errorf("waiting for the reload of demo/web: %w", err)
	}
	fmt.Printf("    rolled in %s\n", time.Since(changed).Round(time.Millisecond))
	d, _ = cs.AppsV1().Deployments("demo").Get(ctx, "web", metav1.GetOptions{})
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		fmt.Printf("    pod template env %s=%s\n", e.Name, e.Value)
	}
	if err := printReplicaSets(ctx, cs); err != nil {
		return err
	}
	evs, err := cs.CoreV1().Events("demo").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=web,reason=Reloaded"})
	if err == nil {
		for _, e := range evs.Items {
			fmt.Printf("    event %s: %s\n", e.Reason, e.Message)
		}
	}
	fmt.Printf("\ndemo complete in %s\n", time.Since(start).Round(time.Second))

	if keep {
		step("still running; in another shell:\n    export KUBECONFIG=%s\n    kubectl -n demo get deploy,rs\n    kubectl -n demo edit configmap web-config\nPress Ctrl-C to stop.", cp.AdminKubeconfig)
		<-ctx.Done()
	}
	stopCtrl()
	if err := <-done; err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	return nil
}

// deployWeb creates the demo's ConfigMap, Secret and the Deployment that
// uses both through envFrom, annotated as a stakater user would annotate it.
func deployWeb(ctx context.Context, cs kubernetes.Interface) (*corev1.ConfigMap, error) {
	if err := controlplane.EnsureNamespace(ctx, cs, "demo"); err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config"}, Data: map[string]string{"GREETING": "hello"}}
	if _, err := cs.CoreV1().ConfigMaps("demo").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-secret"}, StringData: map[string]string{"API_TOKEN": "not-shown-anywhere"}}
	if _, err := cs.CoreV1().Secrets("demo").Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"reloader.stakater.com/auto": "true"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1.0",
					EnvFrom: []corev1.EnvFromSource{
						{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-config"}}},
						{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web-secret"}}},
					}}}}},
		},
	}
	if _, err := cs.AppsV1().Deployments("demo").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	return cm, nil
}

func printReplicaSets(ctx context.Context, cs kubernetes.Interface) error {
	rs, err := cs.AppsV1().ReplicaSets("demo").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
	if err != nil {
		return err
	}
	sort.Slice(rs.Items, func(i, j int) bool {
		return rs.Items[i].Annotations["deployment.kubernetes.io/revision"] < rs.Items[j].Annotations["deployment.kubernetes.io/revision"]
	})
	fmt.Println("    ReplicaSets of demo/web:")
	for _, r := range rs.Items {
		fmt.Printf("      %-24s revision %s  created %s\n", r.Name, r.Annotations["deployment.kubernetes.io/revision"],
			strings.TrimSuffix(r.CreationTimestamp.UTC().Format(time.TimeOnly), "Z"))
	}
	return nil
}

// waitFor polls cond for up to a minute; on timeout the error says what
// cond last reported.
func waitFor(ctx context.Context, cond func() (bool, error)) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (last error: %v)", err, last)
	}
	return err
}

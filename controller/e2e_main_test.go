package controller_test

// End-to-end tests: the real reloader binary against a real kube-apiserver,
// etcd and kube-controller-manager on loopback, with RBAC on. Each test runs
// its own controller scoped to its own namespace, so tests run in parallel
// without seeing each other's workloads.

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/test/controlplane"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

var (
	cp          *controlplane.ControlPlane
	reloaderBin string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	var err error
	if reloaderBin, err = reloadertest.BuildBinary(raceEnabled); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(controlplane.RunTests(m, controlplane.Options{ControllerManager: true}, &cp))
}

func requireControlPlane(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: needs the control plane (run without -short)")
	}
	cp.LogsOnFailure(t)
}

// reloaderProc is a running controller under test.
type reloaderProc struct{ *reloadertest.Controller }

// startReloader runs the binary with args plus a kubeconfig (admin unless
// kubeconfig is given) and a free metrics port, and waits for /readyz.
func startReloader(t *testing.T, kubeconfig string, args ...string) *reloaderProc {
	t.Helper()
	return startReloaderEnv(t, kubeconfig, nil, args...)
}

// startReloaderEnv is startReloader with environment variables (KEY=value).
func startReloaderEnv(t *testing.T, kubeconfig string, env []string, args ...string) *reloaderProc {
	t.Helper()
	if kubeconfig == "" {
		kubeconfig = cp.AdminKubeconfig
	}
	return &reloaderProc{reloadertest.Start(t, reloadertest.Options{Binary: reloaderBin, Kubeconfig: kubeconfig, Args: args, Env: env})}
}

// metric returns the sum of every sample of the metric whose name and labels
// start with prefix (e.g. `reloader_reload_executed_total{success="true"}`).
func (r *reloaderProc) metric(t *testing.T, prefix string) float64 {
	t.Helper()
	body := r.scrape(t)
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || !strings.HasPrefix(line, prefix) {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}

func (r *reloaderProc) scrape(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(r.MetricsURL + "/metrics")
	if err != nil {
		t.Fatalf("scraping metrics: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// waitIdle waits until the controller has synced at least n workloads and its
// queue is empty, which is when "nothing happened" can be asserted.
func (r *reloaderProc) waitIdle(t *testing.T, n int) {
	t.Helper()
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		done := r.metric(t, "reloader_workload_syncs_total")
		depth := r.metric(t, "reloader_workqueue_depth")
		return done >= float64(n) && depth == 0, fmt.Sprintf("syncs %v (want >= %d), queue depth %v", done, n, depth)
	})
}

// eventually polls cond until it holds or timeout passes.
func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func getDeployment(t *testing.T, cs kubernetes.Interface, ns, name string) *appsv1.Deployment {
	t.Helper()
	d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func createDeployment(t *testing.T, cs kubernetes.Interface, ns string, d *appsv1.Deployment) {
	t.Helper()
	if _, err := cs.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func listEvents(t *testing.T, cs kubernetes.Interface, ns string, o metav1.ListOptions) *corev1.EventList {
	t.Helper()
	l, err := cs.CoreV1().Events(ns).List(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func listReplicaSets(t *testing.T, cs kubernetes.Interface, ns string, o metav1.ListOptions) *appsv1.ReplicaSetList {
	t.Helper()
	l, err := cs.AppsV1().ReplicaSets(ns).List(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// revision of a Deployment is the rollout counter the deployment controller
// keeps (deployment.kubernetes.io/revision): 1 for the first ReplicaSet, +1
// per template change. Generation is no use here: a Deployment's generation
// also moves when its metadata annotations change, which is where the
// controller records what it applied.
func revision(t *testing.T, cs kubernetes.Interface, ns, name string) int64 {
	t.Helper()
	d := getDeployment(t, cs, ns, name)
	r, _ := strconv.ParseInt(d.Annotations["deployment.kubernetes.io/revision"], 10, 64)
	return r
}

// managers summarises managedFields: who wrote what, for failure messages.
func managers(d *appsv1.Deployment) string { return fieldOwners(d.ManagedFields) }

// fieldOwners summarises managedFields: who wrote what, for failure
// messages.
func fieldOwners(mf []metav1.ManagedFieldsEntry) string {
	var b strings.Builder
	for _, m := range mf {
		fmt.Fprintf(&b, "[%s %s %s] ", m.Manager, m.Operation, m.FieldsV1.GetRawString())
	}
	return b.String()
}

// waitRevision waits until a Deployment reaches rollout revision want, then
// checks it stays there for settle (no second rollout).
func waitRevision(t *testing.T, cs kubernetes.Interface, ns, name string, want int64, settle time.Duration) {
	t.Helper()
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		d := getDeployment(t, cs, ns, name)
		r, _ := strconv.ParseInt(d.Annotations["deployment.kubernetes.io/revision"], 10, 64)
		return r == want, fmt.Sprintf("Deployment %s/%s revision %d, want %d; fields: %s", ns, name, r, want, managers(d))
	})
	time.Sleep(settle)
	if r := revision(t, cs, ns, name); r != want {
		t.Fatalf("Deployment %s/%s rolled again: revision %d, want %d", ns, name, r, want)
	}
}

func waitRecorded(t *testing.T, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	reloadertest.WaitRecorded(t, cs, ns, name)
	// The first ReplicaSet must exist too, or a change right after this
	// could be absorbed into it and hide the rollout.
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, rolled := d.Annotations["deployment.kubernetes.io/revision"]
		return rolled, fmt.Sprintf("Deployment %s/%s has no first revision", ns, name)
	})
}

func hashOfSecret(data map[string]string) string {
	b := map[string][]byte{}
	for k, v := range data {
		b[k] = []byte(v)
	}
	return hash.SHA1.Secret(b)
}

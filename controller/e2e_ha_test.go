package controller_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/test/process"
	"github.com/reloader-dev/reloader/test/reloadertest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Two replicas with --enable-ha: the leader is killed with SIGKILL while
// changes keep coming; the standby takes the lease within the lease duration
// and every change rolls its workload exactly once.
func TestHAFailoverAppliesEveryChangeOnce(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	names := createUsers(t, cs, ns, 20)
	const lease = 4 * time.Second // startReplica's
	procs := map[string]*reloaderProc{"replica-a": startReplica(t, "", ns, "replica-a"), "replica-b": startReplica(t, "", ns, "replica-b")}
	holder := func() string { return leaseHolder(ctx, cs, ns, testLock) }
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) { return holder() != "", "no leader elected" })
	leader := holder()
	standby := "replica-a"
	if leader == "replica-a" {
		standby = "replica-b"
	}
	for _, n := range names {
		waitRecorded(t, cs, ns, n)
	}
	if err := process.HTTPReady(procs[standby].MetricsURL + "/readyz")(ctx); err != nil {
		t.Fatalf("a warm standby must be ready: %v", err)
	}

	for _, n := range names[:10] {
		updateConfigMapData(t, cs, ns, n, map[string]string{"v": "2"})
	}
	for _, n := range names[:10] {
		waitRevision(t, cs, ns, n, 2, 0)
	}
	killed := time.Now()
	if err := procs[leader].Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, n := range names[10:] {
		updateConfigMapData(t, cs, ns, n, map[string]string{"v": "2"})
	}
	reloadertest.Eventually(t, 2*lease+5*time.Second, func() (bool, string) {
		return holder() == standby, fmt.Sprintf("lease held by %q, want %q", holder(), standby)
	})
	if took := time.Since(killed); took > lease+3*time.Second {
		t.Errorf("standby took the lease %s after the leader died, lease duration is %s", took, lease)
	}
	for _, n := range names {
		waitRevision(t, cs, ns, n, 2, 0)
	}
	procs[standby].waitIdle(t, len(names))
	time.Sleep(time.Second)
	for _, n := range names {
		if r := revision(t, cs, ns, n); r != 2 {
			t.Errorf("%s: revision %d, want exactly one rollout", n, r)
		}
	}
}

// An apiserver restart in the middle of a run loses no change and rolls
// nothing twice: the informers relist and the record says what was applied.
func TestAPIServerRestartLosesNothing(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	names := createUsers(t, cs, ns, 10)
	r := startReloader(t, "", "--namespaces="+ns)
	for _, n := range names {
		waitRecorded(t, cs, ns, n)
	}
	for _, n := range names[:5] {
		updateConfigMapData(t, cs, ns, n, map[string]string{"v": "2"})
	}
	ctx := ctxFor(t)
	if err := cp.RestartAPIServer(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, n := range names[5:] {
		updateConfigMapData(t, cs, ns, n, map[string]string{"v": "2"})
	}
	for _, n := range names {
		waitRevision(t, cs, ns, n, 2, 0)
	}
	r.waitIdle(t, len(names))
	time.Sleep(time.Second)
	for _, n := range names {
		if rev := revision(t, cs, ns, n); rev != 2 {
			t.Errorf("%s: revision %d, want 2", n, rev)
		}
	}
}

// Storm control: 100 changes to one Secret within 2 seconds under a 10 s
// minimum interval roll the workload at most twice, and the last value is
// the one applied.
func TestFlappingSecretIsCoalesced(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, reloadertest.Secret("flapping", map[string]string{"cert": "0"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createDeployment(t, cs, ns, reloadertest.Deployment("web", auto(), reloadertest.PodTemplate("web",
		corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromSecret("flapping")}})))
	r := startReloader(t, "", "--namespaces="+ns, "--min-reload-interval=10s")
	waitRecorded(t, cs, ns, "web")
	for i := 1; i <= 100; i++ {
		if _, err := cs.CoreV1().Secrets(ns).Update(ctx, reloadertest.Secret("flapping", map[string]string{"cert": fmt.Sprint(i)}), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	final := hashOfSecret(map[string]string{"cert": "100"})
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		d := getDeployment(t, cs, ns, "web")
		got, _ := reloadertest.EnvOf(d, "app", "STAKATER_FLAPPING_SECRET")
		return got == final, fmt.Sprintf("STAKATER_FLAPPING_SECRET=%s, want the final hash %s", got, final)
	})
	time.Sleep(time.Second)
	if rev := revision(t, cs, ns, "web"); rev > 3 {
		t.Fatalf("revision %d: %d rollouts, want at most 2", rev, rev-1)
	}
	if v := r.metric(t, "reloader_reload_coalesced_total"); v < 1 {
		t.Fatalf("reloader_reload_coalesced_total = %v, want > 0", v)
	}
}

// A Deployment paused for its pause period is resumed by the next controller
// when the one that paused it was killed during the pause.
func TestPauseSurvivesAControllerKill(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("cfg", map[string]string{"k": "1"}))
	ann := auto()
	ann["deployment.reloader.stakater.com/pause-period"] = "3s"
	createDeployment(t, cs, ns, reloadertest.Deployment("paused", ann, usesConfigMap("paused", "cfg")))
	first := startReloader(t, "", "--namespaces="+ns)
	waitRecorded(t, cs, ns, "paused")
	updateConfigMapData(t, cs, ns, "cfg", map[string]string{"k": "2"})
	reloadertest.Eventually(t, 20*time.Second, func() (bool, string) {
		return getDeployment(t, cs, ns, "paused").Spec.Paused, "not paused after the reload"
	})
	if err := first.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.Done()
	time.Sleep(4 * time.Second) // the pause period ends while no controller runs
	if !getDeployment(t, cs, ns, "paused").Spec.Paused {
		t.Fatal("something other than the controller resumed the Deployment")
	}
	startReloader(t, "", "--namespaces="+ns)
	reloadertest.Eventually(t, 20*time.Second, func() (bool, string) {
		d := getDeployment(t, cs, ns, "paused")
		return !d.Spec.Paused, "the next controller did not resume the Deployment"
	})
}

// reloader-meta-info is published in the controller's namespace with the
// original's name, label and keys.
func TestMetaInfoConfigMap(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	startReloaderEnv(t, "", []string{"RELOADER_NAMESPACE=" + ns, "RELOADER_DEPLOYMENT_NAME=reloader"}, "--namespaces="+ns, "--reload-strategy=annotations")
	var cm *corev1.ConfigMap
	reloadertest.Eventually(t, 20*time.Second, func() (bool, string) {
		var err error
		cm, err = cs.CoreV1().ConfigMaps(ns).Get(ctx, "reloader-meta-info", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	if cm.Labels["reloader.stakater.com/meta-info"] != "reloader" {
		t.Errorf("labels %v", cm.Labels)
	}
	var opts map[string]any
	if err := json.Unmarshal([]byte(cm.Data["reloaderOptions"]), &opts); err != nil {
		t.Fatalf("reloaderOptions: %v", err)
	}
	if opts["reloadStrategy"] != "annotations" {
		t.Errorf("reloaderOptions.reloadStrategy = %v", opts["reloadStrategy"])
	}
	if !strings.Contains(cm.Data["deploymentInfo"], `"name":"reloader"`) || !strings.Contains(cm.Data["buildInfo"], "goVersion") {
		t.Errorf("deploymentInfo %s buildInfo %s", cm.Data["deploymentInfo"], cm.Data["buildInfo"])
	}
}

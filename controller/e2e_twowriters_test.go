package controller_test

// The fault suite: two writers at once, as clusters make them. Whoever
// writes, whatever fails, a workload's pod template only ever moves forward
// through the versions of what it uses: it ends on the final version, never
// goes back to one it had left, and never rolls without a new value. This
// holds for every shape a reload takes (the fleet): Deployments, a declared
// kind, workloads whose changes need approval (never applied unapproved,
// never twice) and notify-only ones (their record never goes back, no
// change is told twice).

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/test/apiproxy"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// viaProxy starts a proxy in front of the apiserver and returns it with a
// kubeconfig that goes through it: a controller started with it can be given
// a lagging view of the cluster on purpose.
func viaProxy(t *testing.T) (*apiproxy.Proxy, string) {
	t.Helper()
	p, err := apiproxy.Start(context.Background(), apiproxy.Options{Upstream: cp.Admin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	kc := filepath.Join(t.TempDir(), "proxy.kubeconfig")
	if err := p.WriteKubeconfig(kc); err != nil {
		t.Fatal(err)
	}
	return p, kc
}

// testLock is the Lease the HA replicas of a test elect a leader with.
const testLock = "reloader-test-lock"

// startReplica runs one HA replica named id in ns (kubeconfig "" is the
// admin's), with a 4 s lease, a 3 s renew deadline and 500 ms retries, so a
// failover takes seconds.
func startReplica(t *testing.T, kubeconfig, ns, id string, flags ...string) *reloaderProc {
	t.Helper()
	return startReloaderEnv(t, kubeconfig, []string{"POD_NAME=" + id, "POD_NAMESPACE=" + ns},
		append([]string{"--namespaces=" + ns, "--enable-ha", "--ha-lock-name=" + testLock,
			"--ha-lease-duration=4s", "--ha-renew-deadline=3s", "--ha-retry-period=500ms"}, flags...)...)
}

func leaseHolder(ctx context.Context, cs kubernetes.Interface, ns, name string) string {
	l, err := cs.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// A one-replica upgrade without HA (the Deployment's RollingUpdate runs the
// new pod beside the old one) is two writers with no lease between them. The
// old pod's ConfigMap watch lags (held by the proxy, deterministically, as a
// slow watch or a partition makes it) while the new pod applies version 2:
// the old pod then sees every Deployment's new record beside ConfigMaps of
// version 1. It must write nothing: a decision from an older view than the
// one applied is dropped. When its watch catches up it agrees, and version 3
// rolls every workload once more, forward.
func TestAnUpgradesOldAndNewPodsNeverRollAWorkloadBack(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	f := newFleet(t, cs, ns, 20)
	names := f.configMaps()
	proxy, lagging := viaProxy(t)

	old := startReloader(t, lagging, f.flags()...)
	f.waitRecorded(t, cs)
	young := startReloader(t, "", f.flags()...)
	young.waitIdle(t, len(names))
	old.waitIdle(t, len(names))

	release := proxy.Hold(apiproxy.Resource("configmaps"))
	defer release()
	before := old.metric(t, "reloader_workload_syncs_total")
	writeAll(t, cs, ns, names, 2)
	f.waitAllOn(t, cs, 2)
	// The old pod's Deployment watch flows: it syncs every workload the new
	// pod rolled, from ConfigMaps it still sees at version 1.
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		got := old.metric(t, "reloader_workload_syncs_total") - before
		return got >= float64(len(names)), fmt.Sprintf("the old pod synced %v of the %d rolled workloads", got, len(names))
	})
	old.waitIdle(t, len(names))
	if n := old.metric(t, "reloader_stale_views_total"); n < 1 {
		t.Errorf("the old pod never decided from a lagging view (reloader_stale_views_total %v): the test did not make two writers disagree", n)
	}

	release()
	old.waitIdle(t, len(names))
	writeAll(t, cs, ns, names, 3)
	f.waitAllOn(t, cs, 3)
	young.waitIdle(t, len(names))
	old.waitIdle(t, len(names))
	time.Sleep(time.Second)

	rollouts, rollbacks := f.check(t, cs, 3)
	t.Logf("upgrade overlap: %d workloads, versions 1-3 written, %d rollouts, %d rollbacks, %v stale decisions dropped by the old pod",
		len(names), rollouts, rollbacks, old.metric(t, "reloader_stale_views_total"))
	if want := 2 * f.rolling(); rollouts != want {
		t.Errorf("%d rollouts, want %d: one per version written after the first", rollouts, want)
	}
}

// The leader is frozen (SIGSTOP: a long GC stall, a node freeze) past its
// lease; the standby takes over and applies version 2. Before the old leader
// is thawed its ConfigMap watch is held, so it wakes with a fresh view of
// the Deployments beside ConfigMaps of version 1, and it believes it leads
// until its next renewal fails. It writes nothing: its lease renewal is past
// the renew deadline on its own monotonic clock (the fence), and its view is
// older than the versions applied (the record). Either alone is enough here.
func TestAFrozenLeaderThawedNeverRollsAWorkloadBack(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	f := newFleet(t, cs, ns, 20)
	names := f.configMaps()
	proxy, frozenView := viaProxy(t)
	leader := startReplica(t, frozenView, ns, "replica-a", f.kind.Flag())
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		h := leaseHolder(ctx, cs, ns, testLock)
		return h == "replica-a", fmt.Sprintf("lease held by %q, want replica-a", h)
	})
	standby := startReplica(t, "", ns, "replica-b", f.kind.Flag())
	f.waitRecorded(t, cs)
	leader.waitIdle(t, len(names))

	if err := leader.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			_ = leader.Signal(syscall.SIGCONT)
		}
	}
	defer thaw()
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		h := leaseHolder(ctx, cs, ns, testLock)
		return h == "replica-b", fmt.Sprintf("lease held by %q, want the standby", h)
	})
	// Held while it is frozen, so not one byte of version 2 reaches its
	// sockets: it wakes with ConfigMaps of version 1.
	release := proxy.Hold(apiproxy.Resource("configmaps"))
	defer release()
	writeAll(t, cs, ns, names, 2)
	f.waitAllOn(t, cs, 2)
	standby.waitIdle(t, len(names))
	// Its lease requests are held too, so it cannot learn that it lost the
	// lease before its renew deadline runs out: however fast or slow the
	// machine, it wakes believing it leads and syncs the new records first.
	releaseLease := proxy.Hold(apiproxy.Resource("leases"))
	defer releaseLease()
	thaw()
	// It runs until its renewal fails and it exits; every sync it makes in
	// between sees the new records.
	select {
	case <-leader.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the thawed leader did not step down within 30s")
	}
	thawedLog := leader.Tail(100000)
	if !strings.Contains(thawedLog, "leadership lost") {
		t.Errorf("the thawed leader exited without saying it lost the lease:\n%s", leader.Tail(40))
	}
	fenced := strings.Count(thawedLog, "holding writes")
	stale := strings.Count(thawedLog, "older view than the one already applied")
	if fenced+stale == 0 {
		t.Errorf("the thawed leader decided nothing before it stepped down: the test did not make two writers disagree\n%s", leader.Tail(40))
	}
	release()

	writeAll(t, cs, ns, names, 3)
	f.waitAllOn(t, cs, 3)
	standby.waitIdle(t, len(names))
	time.Sleep(time.Second)
	rollouts, rollbacks := f.check(t, cs, 3)
	t.Logf("frozen leader: %d workloads, versions 1-3 written, %d rollouts, %d rollbacks; the thawed leader held %d writes at the fence and dropped %d stale decisions",
		len(names), rollouts, rollbacks, fenced, stale)
	if want := 2 * f.rolling(); rollouts != want {
		t.Errorf("%d rollouts, want %d: one per version written after the first", rollouts, want)
	}
}

// Faults one after another, as a bad day brings them, under two HA
// replicas: the leader killed while changes come, the killed one back, etcd
// compacted to its head and the apiserver restarted (every watch must list
// again), both replicas down while changes are made, and three writes in a
// row. Every workload ends on its ConfigMap's final version; no template
// ever goes back; no rollout without a new value.
func TestFaultsInARowNeverRollAWorkloadBack(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	f := newFleet(t, cs, ns, 30)
	names := f.configMaps()
	start := func(id string) *reloaderProc { return startReplica(t, "", ns, id, f.kind.Flag()) }
	replicas := map[string]*reloaderProc{"replica-a": start("replica-a"), "replica-b": start("replica-b")}
	holder := func() string { return leaseHolder(ctx, cs, ns, testLock) }
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) { return holder() != "", "no leader elected" })
	f.waitRecorded(t, cs)
	version := 1
	next := func(subset []string) {
		version++
		writeAll(t, cs, ns, subset, version)
	}

	// 1. The leader killed while changes come.
	leader := holder()
	next(names[:15])
	if err := replicas[leader].Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	writeAll(t, cs, ns, names[15:], version)
	f.waitAllOn(t, cs, version)

	// 2. The killed replica back, as its Deployment would restart it.
	replicas[leader] = start(leader)
	next(names)
	f.waitAllOn(t, cs, version)

	// 3. etcd compacted to its head, then the apiserver restarted while
	// changes are written: every watch resumes from a compacted version and
	// must list again.
	if _, err := cp.CompactEtcd(ctx); err != nil {
		t.Fatal(err)
	}
	next(names[:10])
	if err := cp.RestartAPIServer(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	writeAll(t, cs, ns, names[10:], version)
	f.waitAllOn(t, cs, version)

	// 4. Both replicas down while changes are made; both back.
	for id, r := range replicas {
		if err := r.Signal(syscall.SIGKILL); err != nil {
			t.Fatalf("killing %s: %v", id, err)
		}
		<-r.Done()
	}
	next(names)
	for id := range replicas {
		replicas[id] = start(id)
	}
	f.waitAllOn(t, cs, version)

	// 5. Three writes in a row.
	for range 3 {
		next(names)
	}
	f.waitAllOn(t, cs, version)
	replicas[holder()].waitIdle(t, len(names)) // a standby's queue waits for the lease
	time.Sleep(time.Second)

	rollouts, rollbacks := f.check(t, cs, version)
	t.Logf("faults in a row: %d workloads, versions 1-%d written (%d writes), %d rollouts, %d rollbacks (the test's own watch listed again %d times)",
		len(names), version, len(names)*(version-1), rollouts, rollbacks, f.templates.relists)
}

package controller_test

// The fault suite: two writers at once, as clusters make them. Whoever
// writes, whatever fails, a workload's pod template only ever moves forward
// through the versions of what it uses: it ends on the final version, never
// goes back to one it had left, and never rolls without a new value.

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/test/apiproxy"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// versionData is what version i of every test ConfigMap holds.
func versionData(i int) map[string]string { return map[string]string{"v": fmt.Sprint(i)} }

// templateLog follows, from the test's side, the reload variable of every
// Deployment in a namespace as the apiserver commits it: one watch, resumed
// from its last resourceVersion across apiserver restarts. Only a compacted
// history (410 Gone) makes it list again, which can skip a template but never
// invent one: a rollback it reports happened.
type templateLog struct {
	mu      sync.Mutex
	values  map[string][]string // Deployment -> values its variable took, in order
	relists int
}

func followTemplates(t *testing.T, cs kubernetes.Interface, ns string) *templateLog {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tl := &templateLog{values: map[string][]string{}}
	rv, err := tl.list(ctx, cs, ns)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			tl.follow(ctx, cs, ns, rv)
			if ctx.Err() != nil {
				return
			}
			// The history it resumed from was compacted: list again.
			if rv, err = tl.list(ctx, cs, ns); err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			tl.mu.Lock()
			tl.relists++
			tl.mu.Unlock()
		}
	}()
	return tl
}

func (tl *templateLog) list(ctx context.Context, cs kubernetes.Interface, ns string) (string, error) {
	l, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for i := range l.Items {
		tl.observe(&l.Items[i])
	}
	return l.ResourceVersion, nil
}

// follow watches from rv until the watch ends (ctx, or a 410 Gone).
func (tl *templateLog) follow(ctx context.Context, cs kubernetes.Interface, ns, rv string) {
	w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cs.AppsV1().Deployments(ns).Watch(ctx, o)
		},
	})
	if err != nil {
		return
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added, watch.Modified:
			if d, ok := ev.Object.(*appsv1.Deployment); ok {
				tl.observe(d)
			}
		case watch.Error:
			return
		}
	}
}

func (tl *templateLog) observe(d *appsv1.Deployment) {
	v, _ := reloadertest.EnvOf(d, "app", controller.EnvVarName(refs.ConfigMap, d.Name))
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if vs := tl.values[d.Name]; len(vs) == 0 || vs[len(vs)-1] != v {
		tl.values[d.Name] = append(vs, v)
	}
}

// check holds the suite's guarantees for every Deployment in names, whose
// ConfigMap was written with versions 1..last in that order: the template's
// values are versions it was written with, each newer than the one before
// (never back, never the same twice: no rollout without a new value), the
// last one the final version. It returns the rollouts and the rollbacks seen.
func (tl *templateLog) check(t *testing.T, names []string, last int) (rollouts, rollbacks int) {
	t.Helper()
	version := map[string]int{"": 0} // 0: no variable yet (adopted, never rolled)
	for i := 1; i <= last; i++ {
		version[hash.SHA1.ConfigMap(versionData(i), nil)] = i
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	for _, n := range names {
		vs := tl.values[n]
		var seen []int
		for _, v := range vs {
			i, known := version[v]
			if !known {
				t.Errorf("%s: template took %q, the hash of no version written", n, v)
				continue
			}
			seen = append(seen, i)
		}
		back := 0
		for k := 1; k < len(seen); k++ {
			rollouts++
			if seen[k] <= seen[k-1] {
				back++
			}
		}
		if back > 0 {
			rollbacks += back
			shown := fmt.Sprint(seen)
			if len(seen) > 16 {
				shown = fmt.Sprintf("%v ... %v", seen[:12], seen[len(seen)-4:])
			}
			t.Errorf("%s rolled back %d times: its template took versions %s, in that order", n, back, shown)
		}
		if len(seen) == 0 || seen[len(seen)-1] != last {
			t.Errorf("%s ended on versions %v, want the final version %d", n, seen, last)
		}
	}
	return rollouts, rollbacks
}

// writeAll writes version i of every ConfigMap in names.
func writeAll(t *testing.T, cs kubernetes.Interface, ns string, names []string, i int) {
	t.Helper()
	for _, n := range names {
		updateConfigMapData(t, cs, ns, n, versionData(i))
	}
}

// waitAllOn waits until every Deployment's template carries version i. If
// they never get there, what the templates went through is the finding: it
// is checked (and rollbacks named) before the test stops.
func (tl *templateLog) waitAllOn(t *testing.T, cs kubernetes.Interface, ns string, names []string, i int) {
	t.Helper()
	want := hash.SHA1.ConfigMap(versionData(i), nil)
	var behind []string
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		behind = behind[:0]
		for i := range l.Items {
			d := &l.Items[i]
			if !slices.Contains(names, d.Name) {
				continue
			}
			if v, _ := reloadertest.EnvOf(d, "app", controller.EnvVarName(refs.ConfigMap, d.Name)); v != want {
				behind = append(behind, d.Name)
			}
		}
		return len(behind) == 0, nil
	})
	if err != nil {
		rollouts, rollbacks := tl.check(t, names, i)
		t.Fatalf("not on version %d after 60s: %s (%d rollouts, %d rollbacks so far)", i, strings.Join(behind, ","), rollouts, rollbacks)
	}
}

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
func startReplica(t *testing.T, kubeconfig, ns, id string) *reloaderProc {
	t.Helper()
	return startReloaderEnv(t, kubeconfig, []string{"POD_NAME=" + id, "POD_NAMESPACE=" + ns},
		"--namespaces="+ns, "--enable-ha", "--ha-lock-name="+testLock,
		"--ha-lease-duration=4s", "--ha-renew-deadline=3s", "--ha-retry-period=500ms")
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
	names := createUsers(t, cs, ns, 20)
	log := followTemplates(t, cs, ns)
	proxy, lagging := viaProxy(t)

	old := startReloader(t, lagging, "--namespaces="+ns)
	for _, n := range names {
		waitRecorded(t, cs, ns, n)
	}
	young := startReloader(t, "", "--namespaces="+ns)
	young.waitIdle(t, len(names))
	old.waitIdle(t, len(names))

	release := proxy.Hold(apiproxy.Resource("configmaps"))
	defer release()
	before := old.metric(t, "reloader_workload_syncs_total")
	writeAll(t, cs, ns, names, 2)
	log.waitAllOn(t, cs, ns, names, 2)
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
	log.waitAllOn(t, cs, ns, names, 3)
	young.waitIdle(t, len(names))
	old.waitIdle(t, len(names))
	time.Sleep(time.Second)

	rollouts, rollbacks := log.check(t, names, 3)
	t.Logf("upgrade overlap: %d workloads, versions 1-3 written, %d rollouts, %d rollbacks, %v stale decisions dropped by the old pod",
		len(names), rollouts, rollbacks, old.metric(t, "reloader_stale_views_total"))
	if want := 2 * len(names); rollouts != want {
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
	names := createUsers(t, cs, ns, 20)
	log := followTemplates(t, cs, ns)
	proxy, frozenView := viaProxy(t)
	leader := startReplica(t, frozenView, ns, "replica-a")
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		h := leaseHolder(ctx, cs, ns, testLock)
		return h == "replica-a", fmt.Sprintf("lease held by %q, want replica-a", h)
	})
	standby := startReplica(t, "", ns, "replica-b")
	for _, n := range names {
		waitRecorded(t, cs, ns, n)
	}
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
	log.waitAllOn(t, cs, ns, names, 2)
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
	log.waitAllOn(t, cs, ns, names, 3)
	standby.waitIdle(t, len(names))
	time.Sleep(time.Second)
	rollouts, rollbacks := log.check(t, names, 3)
	t.Logf("frozen leader: %d workloads, versions 1-3 written, %d rollouts, %d rollbacks; the thawed leader held %d writes at the fence and dropped %d stale decisions",
		len(names), rollouts, rollbacks, fenced, stale)
	if want := 2 * len(names); rollouts != want {
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
	names := createUsers(t, cs, ns, 30)
	log := followTemplates(t, cs, ns)
	start := func(id string) *reloaderProc { return startReplica(t, "", ns, id) }
	replicas := map[string]*reloaderProc{"replica-a": start("replica-a"), "replica-b": start("replica-b")}
	holder := func() string { return leaseHolder(ctx, cs, ns, testLock) }
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) { return holder() != "", "no leader elected" })
	for _, n := range names {
		waitRecorded(t, cs, ns, n)
	}
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
	log.waitAllOn(t, cs, ns, names, version)

	// 2. The killed replica back, as its Deployment would restart it.
	replicas[leader] = start(leader)
	next(names)
	log.waitAllOn(t, cs, ns, names, version)

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
	log.waitAllOn(t, cs, ns, names, version)

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
	log.waitAllOn(t, cs, ns, names, version)

	// 5. Three writes in a row.
	for range 3 {
		next(names)
	}
	log.waitAllOn(t, cs, ns, names, version)
	replicas[holder()].waitIdle(t, len(names)) // a standby's queue waits for the lease
	time.Sleep(time.Second)

	rollouts, rollbacks := log.check(t, names, version)
	t.Logf("faults in a row: %d workloads, versions 1-%d written (%d writes), %d rollouts, %d rollbacks (the test's own watch listed again %d times)",
		len(names), version, len(names)*(version-1), rollouts, rollbacks, log.relists)
}

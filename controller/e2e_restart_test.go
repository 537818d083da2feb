package controller_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/test/controlplane"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

func createUsers(t *testing.T, cs kubernetes.Interface, ns string, n int) []string {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("app-%02d", i)
		reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap(names[i], map[string]string{"v": "1"}))
		createDeployment(t, cs, ns, reloadertest.Deployment(names[i], auto(), usesConfigMap(names[i], names[i])))
	}
	for _, n := range names {
		reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
			return revision(t, cs, ns, n) == 1, "deployment controller has not made revision 1 of " + n
		})
	}
	return names
}

// Changes made while the controller is down are applied when it comes back,
// each exactly once, and only to the workloads whose configuration changed
// (stakater/Reloader applies none of them, #814).
func TestChangesMadeWhileDownAreAppliedOnce(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	names := createUsers(t, cs, ns, 20)
	first := startReloader(t, "", "--namespaces="+ns)
	for _, n := range names {
		waitRecorded(t, cs, ns, n)
	}
	if err := first.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	changed := names[:10]
	for _, n := range changed {
		updateConfigMapData(t, cs, ns, n, map[string]string{"v": "2"})
	}
	second := startReloader(t, "", "--namespaces="+ns)
	for _, n := range changed {
		waitRevision(t, cs, ns, n, 2, 0)
	}
	second.waitIdle(t, len(names))
	time.Sleep(time.Second)
	for i, n := range names {
		want := int64(1)
		if i < 10 {
			want = 2
		}
		if r := revision(t, cs, ns, n); r != want {
			t.Errorf("%s: revision %d, want %d", n, r, want)
		}
	}
	if v := second.metric(t, `reloader_reload_executed_total{success="true"}`); v != 10 {
		t.Errorf("reloads after restart = %v, want 10", v)
	}
}

// Restarting with no change rolls nothing, also with --reload-on-create and
// --sync-after-restart (stakater/Reloader rolls every workload, #299), and
// also for workloads the controller has never seen before.
func TestRestartWithoutChangesRollsNothing(t *testing.T) {
	requireControlPlane(t)
	for _, args := range [][]string{nil, {"--reload-on-create=true", "--sync-after-restart"}} {
		t.Run(strings.Join(append([]string{"flags"}, args...), " "), func(t *testing.T) {
			cs := cp.AdminClient(t)
			ns := cp.Namespace(t)
			names := createUsers(t, cs, ns, 10)
			for round := 0; round < 2; round++ {
				r := startReloader(t, "", append([]string{"--namespaces=" + ns}, args...)...)
				for _, n := range names {
					waitRecorded(t, cs, ns, n)
				}
				r.waitIdle(t, len(names))
				time.Sleep(500 * time.Millisecond)
				if v := r.metric(t, "reloader_reload_executed_total"); v != 0 {
					t.Fatalf("round %d: %v reloads, want 0", round, v)
				}
				for _, n := range names {
					if rev := revision(t, cs, ns, n); rev != 1 {
						t.Fatalf("round %d: %s rolled (revision %d)", round, n, rev)
					}
				}
				if err := r.Stop(10 * time.Second); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// In namespaced mode the controller needs no ClusterRole: a ServiceAccount
// with a Role in each watched namespace is enough to start and to reload.
func TestNamespacedModeRunsUnderRolesOnly(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	home := cp.Namespace(t)
	watched := []string{cp.Namespace(t), cp.Namespace(t)}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "daemonsets"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
		{APIGroups: []string{"batch"}, Resources: []string{"cronjobs"}, Verbs: []string{"get", "list", "watch", "patch"}},
		{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"get", "list", "watch", "create", "delete", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
	for _, ns := range watched {
		if err := cp.Grant(ctx, "reloader", ns, controlplane.ServiceAccount(home, "reloader"), rules); err != nil {
			t.Fatal(err)
		}
		reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("cfg", map[string]string{"k": "1"}))
		createDeployment(t, cs, ns, reloadertest.Deployment("web", auto(), usesConfigMap("web", "cfg")))
	}
	for _, ns := range watched {
		// Revision 1 must exist before the change, or one ReplicaSet could
		// absorb both templates and hide the rollout.
		waitRevision(t, cs, ns, "web", 1, 0)
	}
	saCfg, err := cp.ServiceAccountConfig(ctx, home, "reloader")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := t.TempDir() + "/sa.kubeconfig"
	if err := controlplane.WriteKubeconfig(saCfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	crbs, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range crbs.Items {
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Namespace == home {
				t.Fatalf("ClusterRoleBinding %s binds the controller's ServiceAccount", b.Name)
			}
		}
	}
	startReloader(t, kubeconfig, "--namespaces="+strings.Join(watched, ","))
	for _, ns := range watched {
		waitRecorded(t, cs, ns, "web")
		updateConfigMapData(t, cs, ns, "cfg", map[string]string{"k": "2"})
	}
	for _, ns := range watched {
		waitRevision(t, cs, ns, "web", 2, 0)
	}
}

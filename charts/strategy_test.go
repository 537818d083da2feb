package charts

import (
	"fmt"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/reloader-dev/reloader/test/controlplane"
)

// strategyOf is a Deployment strategy in one line, rollingUpdate fields only
// when set: "Recreate", "RollingUpdate maxSurge=1 maxUnavailable=0".
func strategyOf(s appsv1.DeploymentStrategy) string {
	out := string(s.Type)
	if ru := s.RollingUpdate; ru != nil {
		if ru.MaxSurge != nil {
			out += " maxSurge=" + ru.MaxSurge.String()
		}
		if ru.MaxUnavailable != nil {
			out += " maxUnavailable=" + ru.MaxUnavailable.String()
		}
	}
	return out
}

// Without HA a `helm upgrade` must not start the new controller beside the
// old one (two writers, no leader election): Recreate. With HA the Lease
// makes a surge pod a standby, so the rollout is one pod at a time and never
// below the replicas asked for. reloader.deployment.strategy is taken as
// given, also RollingUpdate without HA.
func TestDeploymentStrategyFollowsHA(t *testing.T) {
	rolling := map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "50%", "maxUnavailable": 0}}
	for _, tc := range []struct {
		name string
		set  map[string]any
		want string
	}{
		{"one replica without HA", nil, "Recreate"},
		{"HA by replicas", map[string]any{"reloader.deployment.replicas": 2}, "RollingUpdate maxSurge=1 maxUnavailable=0"},
		{"HA asked for with one replica", map[string]any{"reloader.enableHA": true}, "RollingUpdate maxSurge=1 maxUnavailable=0"},
		{"no replicas", map[string]any{"reloader.deployment.replicas": 0}, "Recreate"},
		{"explicit RollingUpdate without HA", map[string]any{"reloader.deployment.strategy": rolling}, "RollingUpdate maxSurge=50% maxUnavailable=0"},
		{"explicit type only", map[string]any{"reloader.deployment.strategy": map[string]any{"type": "RollingUpdate"}}, "RollingUpdate"},
		{"explicit Recreate with HA", map[string]any{"reloader.deployment.replicas": 3, "reloader.deployment.strategy": map[string]any{"type": "Recreate"}}, "Recreate"},
		{"null is the default", map[string]any{"reloader.deployment.strategy": nil}, "Recreate"},
	} {
		for _, chart := range []string{Reloader, ReloaderUBI} {
			t.Run(chart+"/"+tc.name, func(t *testing.T) {
				d := deployment(t, render(t, chart, Release{Name: "rel", Namespace: "ops", Values: values(tc.set)}))
				if got := strategyOf(d.Spec.Strategy); got != tc.want {
					t.Errorf("strategy = %s, want %s", got, tc.want)
				}
			})
		}
	}
}

// `helm upgrade` switches the strategy of the Deployment in place, on a real
// apiserver: from a RollingUpdate whose surge the apiserver defaulted (what a
// release of stakater's chart, or of this chart before, left behind: Helm's
// three-way merge never saw those fields) to Recreate, which the apiserver
// refuses while rollingUpdate is still set; then with the replicas to HA's
// RollingUpdate and back.
func TestHelmUpgradeSwitchesTheStrategyInPlace(t *testing.T) {
	needControlPlane(t)
	ctx := testContext(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	cfg := helmConfig(t, ns)
	c, err := Load(Reloader)
	if err != nil {
		t.Fatal(err)
	}
	const name = "strategy"
	var uid string
	for i, step := range []struct {
		set  map[string]any
		want string
	}{
		{map[string]any{"reloader.deployment.strategy": map[string]any{"type": "RollingUpdate"}}, "RollingUpdate maxSurge=25% maxUnavailable=25%"},
		// Not empty: `helm upgrade` without values reuses the last release's.
		{map[string]any{"reloader.deployment.replicas": 1}, "Recreate"},
		{map[string]any{"reloader.deployment.replicas": 2}, "RollingUpdate maxSurge=1 maxUnavailable=0"},
		{map[string]any{"reloader.deployment.replicas": 1}, "Recreate"},
	} {
		what := fmt.Sprintf("step %d (%v)", i, step.set)
		if i == 0 {
			install := action.NewInstall(cfg)
			install.ReleaseName, install.Namespace = name, ns
			if _, err := install.RunWithContext(ctx, c, values(step.set)); err != nil {
				t.Fatalf("%s: helm install: %v", what, err)
			}
		} else {
			upgrade := action.NewUpgrade(cfg)
			upgrade.Namespace = ns
			if _, err := upgrade.RunWithContext(ctx, name, c, values(step.set)); err != nil {
				t.Fatalf("%s: helm upgrade: %v", what, err)
			}
		}
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, name+"-"+Reloader, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := strategyOf(d.Spec.Strategy); got != step.want {
			t.Errorf("%s: the stored Deployment's strategy is %s, want %s", what, got, step.want)
		}
		if uid == "" {
			uid = string(d.UID)
		} else if string(d.UID) != uid {
			t.Errorf("%s: the Deployment was replaced (uid %s -> %s), want it upgraded in place", what, uid, d.UID)
		}
	}
}

// helmConfig is the Helm SDK pointed at the test apiserver, storing releases
// as Secrets in ns, as the helm CLI does.
func helmConfig(t *testing.T, ns string) *action.Configuration {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := controlplane.WriteKubeconfig(cp.Admin, kubeconfig); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

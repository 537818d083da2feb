package explain_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/explain"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// A reload the rollout budget holds is explained as blocked by it, with
// the count the controller sees (its --max-concurrent-rollouts read from
// reloader-meta-info), and the controller says so once, in an Event. This
// control plane runs no kube-controller-manager, so no rollout ever
// finishes: "other", managed, rolls out for as long as the test runs, and
// the controller, finding it rolling when it first counts, takes it as a
// rollout a previous leader started (controller/budget/hold.go).
func TestExplainShowsTheRolloutBudgetHolding(t *testing.T) {
	requireControlPlane(t)
	ctx := context.Background()
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, configMap("app-config", nil, nil), configMap("other-config", nil, nil),
		deployment("web", ann(auto, "true"), nil, envFromCM("app-config")),
		deployment("other", ann(auto, "true"), nil, envFromCM("other-config")))
	c := startController(t, ns, "--max-concurrent-rollouts=1")
	waitRecorded(t, cs, ns, "web")
	waitRecorded(t, cs, ns, "other")
	setConfigMapData(t, cs, ns, "app-config", map[string]string{"k": "2"})
	var msgs []string
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		msgs = nil
		l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=RolloutWaiting,involvedObject.name=web"})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range l.Items {
			msgs = append(msgs, e.Message)
		}
		return len(msgs) > 0, "no RolloutWaiting Event on web"
	})
	if want := "waits for a rollout slot: 1 of 1 rolling out in the cluster (--max-concurrent-rollouts), 0 due earlier"; len(msgs) != 1 || !strings.Contains(msgs[0], want) {
		t.Errorf("RolloutWaiting Events %q, want one containing %q", msgs, want)
	}
	args := []string{"explain", "deploy/web", "-n", ns, "--controller-namespace=" + ns, "--readyz-url=" + c.readyz}
	r := runExplain(t, reloaderBin, cp.AdminKubeconfig, args...)
	want := "the rollout budget (--max-concurrent-rollouts=1) holds it: 1 rolling out in the cluster"
	if r.code != explain.ExitPending || !strings.Contains(r.stdout, "but blocked: "+want) {
		t.Fatalf("exit %d, want %d and %q:\n%s%s", r.code, explain.ExitPending, want, r.stdout, r.stderr)
	}
	rep := reportOf(t, runExplain(t, reloaderBin, cp.AdminKubeconfig, append(args, "-o", "json")...))
	if rep.Verdict != explain.Blocked || !strings.Contains(fmt.Sprint(rep.Holds), want) {
		t.Errorf("report: verdict %s, holds %q", rep.Verdict, rep.Holds)
	}
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if env := d.Spec.Template.Spec.Containers[0].Env; len(env) != 0 {
		t.Errorf("web was reloaded while held: %v", env)
	}
}

// A reload due outside the workload's change window is explained as
// blocked until the window opens, with the time it opens.
func TestExplainShowsWhenTheChangeWindowOpens(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	// Open for a minute at the start of each year: closed now, whatever the date.
	window := "CRON_TZ=Europe/Berlin 0 0 1 1 * 1m"
	reloadertest.MustCreate(t, cs, ns, configMap("app-config", nil, nil),
		deployment("web", ann(auto, "true", "reloader.stakater.com/change-window", window), nil, envFromCM("app-config")))
	c := startController(t, ns)
	waitRecorded(t, cs, ns, "web")
	setConfigMapData(t, cs, ns, "app-config", map[string]string{"k": "2"})
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	opens := time.Date(time.Now().In(berlin).Year()+1, 1, 1, 0, 0, 0, 0, berlin).UTC().Format(time.RFC3339)
	args := []string{"explain", "deploy/web", "-n", ns, "--controller-namespace=" + ns, "--readyz-url=" + c.readyz}
	want := fmt.Sprintf("outside its change window %q (reloader.stakater.com/change-window on the metadata): applied when it opens at %s", window, opens)
	reloadertest.Eventually(t, 20*time.Second, func() (bool, string) {
		r := runExplain(t, reloaderBin, cp.AdminKubeconfig, args...)
		return r.code == explain.ExitPending && strings.Contains(r.stdout, "but blocked: "+want), fmt.Sprintf("exit %d, want %d and %q:\n%s%s", r.code, explain.ExitPending, want, r.stdout, r.stderr)
	})
}

// setConfigMapData replaces the data of ConfigMap ns/name: a change the
// controller sees as due.
func setConfigMapData(t *testing.T, cs kubernetes.Interface, ns, name string, data map[string]string) {
	t.Helper()
	ctx := context.Background()
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = data
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

package controller_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/reloader-dev/reloader/test/process"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// The webhook and alert URLs are credentials: given in the environment (as
// the chart does, from a Secret), a token planted in each never appears in
// the process's arguments, its logs at debug level, Events, /metrics,
// reloader-meta-info or pprof's /debug/pprof/cmdline, and both endpoints
// are still used. --webhook-url on the command line still works, with a
// warning that does not repeat the URL.
func TestWebhookAndAlertURLTokensNeverLeaveTheController(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	hookToken, alertToken := "HOOKTOKEN"+rand.String(24), "ALERTTOKEN"+rand.String(24)
	ns := cp.Namespace(t)
	hooks, alerts := newReceiver(t, 0), newReceiver(t, 0)
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, reloadertest.Secret("db-password", map[string]string{"password": "one"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tmpl := reloadertest.PodTemplate("app", corev1.Container{Name: "app", EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromSecret("db-password")}})
	createDeployment(t, cs, ns, reloadertest.Deployment("app", map[string]string{"reloader.stakater.com/auto": "true"}, tmpl))

	pport, err := process.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	pprofURL := "http://127.0.0.1:" + strconv.Itoa(pport)
	args := []string{"--namespaces=" + ns, "--log-level=debug", "--enable-pprof", "--pprof-addr=127.0.0.1:" + strconv.Itoa(pport)}
	r := startReloaderEnv(t, "", []string{"RELOADER_NAMESPACE=" + ns, "RELOADER_DEPLOYMENT_NAME=reloader",
		"RELOADER_WEBHOOK_URL=" + hooks.srv.URL + "/hook/" + hookToken,
		"ALERT_ON_RELOAD=true", "ALERT_SINK=raw", "ALERT_WEBHOOK_URL=" + alerts.srv.URL + "/alert/" + alertToken}, args...)
	waitRecorded(t, cs, ns, "app")
	if _, err := cs.CoreV1().Secrets(ns).Update(ctx, reloadertest.Secret("db-password", map[string]string{"password": "two"}), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		return len(hooks.received()) == 1, fmt.Sprintf("%d webhooks received", len(hooks.received()))
	})
	r.waitIdle(t, 2)

	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", r.PID()))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(pprofURL + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatalf("pprof on its loopback address: %v", err)
	}
	pprofCmdline, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(pprofCmdline), "--enable-pprof") {
		t.Fatalf("pprof's cmdline %q is not the controller's; the search would prove nothing", pprofCmdline)
	}
	meta, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "reloader-meta-info", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	log := readLog(t, r.LogPath())
	places := map[string]string{
		"process arguments":    string(cmdline),
		"/debug/pprof/cmdline": string(pprofCmdline),
		"log at debug level":   log,
		"Events":               asJSON(t, listEvents(t, cs, ns, metav1.ListOptions{}).Items),
		"/metrics":             r.scrape(t),
		"reloader-meta-info":   asJSON(t, meta),
		"webhook bodies":       strings.Join(hooks.received(), "\n"),
		"alert bodies":         strings.Join(alerts.received(), "\n"),
		"workloads it wrote":   asJSON(t, getDeployment(t, cs, ns, "app")),
	}
	for where, text := range places {
		for _, token := range []string{hookToken, alertToken} {
			for form, s := range canaryForms(token) {
				if strings.Contains(text, s) {
					t.Errorf("a URL token appears, %s, in the %s", form, where)
				}
			}
		}
	}

	// The stakater flag still works, and warns without repeating the URL.
	ns2 := cp.Namespace(t)
	flagged := startReloader(t, "", "--namespaces="+ns2, "--webhook-url="+hooks.srv.URL+"/hook/"+hookToken)
	reloadertest.Eventually(t, 10*time.Second, func() (bool, string) {
		l := readLog(t, flagged.LogPath())
		return strings.Contains(l, "--webhook-url puts the webhook URL, a credential, on the command line"), "no warning about --webhook-url in the log:\n" + l
	})
	if l := readLog(t, flagged.LogPath()); strings.Contains(l, hookToken) {
		t.Errorf("the warning about --webhook-url repeats the URL:\n%s", l)
	}
}

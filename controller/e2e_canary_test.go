package controller_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/controller/fingerprint"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// canaryForms are the spellings a leaked value could take: raw, base64 (as
// in a Secret's data, in both alphabets, padded or not), hex (either case)
// and URL-encoded (query and path escaping).
func canaryForms(v string) map[string]string {
	b := []byte(v)
	return map[string]string{
		"raw":             v,
		"base64":          base64.StdEncoding.EncodeToString(b),
		"base64 unpadded": base64.RawStdEncoding.EncodeToString(b),
		"base64url":       base64.URLEncoding.EncodeToString(b),
		"hex":             hex.EncodeToString(b),
		"HEX":             strings.ToUpper(hex.EncodeToString(b)),
		"query-escaped":   url.QueryEscape(v),
		"path-escaped":    url.PathEscape(v),
	}
}

// newCanary is a random value with characters that base64, hex and URL
// encodings all change.
func newCanary() string { return "CANARY/" + rand.String(20) + "+=&? %" }

// A canary planted in Secret and ConfigMap values, and the controller's
// fingerprint key, never leave the controller in any spelling: not in its text or JSON logs at debug level,
// not in Events, /metrics, reloader-meta-info, alert bodies or webhook
// bodies, not in the workloads it writes. Two controllers cover both log
// formats, alerts and --webhook-url mode; the search runs only after each
// has demonstrably done its work.
func TestCanariesNeverLeaveTheController(t *testing.T) {
	requireControlPlane(t)
	ctx := ctxFor(t)
	cs := cp.AdminClient(t)
	before, after, cmValue := newCanary(), newCanary(), newCanary()
	plant := func(ns string) {
		t.Helper()
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, reloadertest.Secret("db-password", map[string]string{"password": before}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("settings", map[string]string{"token": cmValue}))
		tmpl := reloadertest.PodTemplate("app", corev1.Container{Name: "app",
			EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromSecret("db-password"), reloadertest.EnvFromConfigMap("settings")}})
		createDeployment(t, cs, ns, reloadertest.Deployment("app", map[string]string{
			"reloader.stakater.com/auto":             "true",
			"configmap.reloader.stakater.com/reload": "([", // an invalid regex, so a ReloadFail Event is written too
		}, tmpl))
	}
	rotate := func(ns string) {
		t.Helper()
		// A named field manager, as a rotation job or a GitOps tool has: the
		// audit trail and the Reloaded Event must name it.
		if _, err := cs.CoreV1().Secrets(ns).Update(ctx, reloadertest.Secret("db-password", map[string]string{"password": after}), metav1.UpdateOptions{FieldManager: "secret-rotator"}); err != nil {
			t.Fatal(err)
		}
	}

	// A: text logs, alerts, reloader-meta-info, annotations strategy, the
	// audit trail on stdout apart from the logs, per-key mode (so A makes
	// its fingerprint key, whose bytes must never leave it either).
	nsA := cp.Namespace(t)
	alertsRcv := newReceiver(t, 0)
	plant(nsA)
	plantApproval(t, nsA)
	auditPath := filepath.Join(t.TempDir(), "stdout")
	a := &reloaderProc{reloadertest.Start(t, reloadertest.Options{Binary: reloaderBin, Kubeconfig: cp.AdminKubeconfig, StdoutPath: auditPath,
		Env: []string{"RELOADER_NAMESPACE=" + nsA, "RELOADER_DEPLOYMENT_NAME=reloader",
			"ALERT_ON_RELOAD=true", "ALERT_SINK=raw", "ALERT_WEBHOOK_URL=" + alertsRcv.srv.URL + "/alert"},
		Args: []string{"--namespaces=" + nsA, "--log-level=debug", "--reload-strategy=annotations", "--audit-log", "--reload-on-used-keys-only"}})}
	waitRecorded(t, cs, nsA, "app")
	waitRecorded(t, cs, nsA, "gated")
	waitRecorded(t, cs, nsA, "notified")
	rotate(nsA)
	waitRevision(t, cs, nsA, "app", 2, 0)
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		return len(alertsRcv.received()) == 3, fmt.Sprintf("%d alerts received, want the reload, the change awaiting approval and the one notified", len(alertsRcv.received()))
	})
	waitApprovalReports(t, a, nsA)
	a.waitIdle(t, 4)

	// B: JSON logs, --webhook-url mode.
	nsB := cp.Namespace(t)
	hookRcv := newReceiver(t, 0)
	plant(nsB)
	b := startReloader(t, "", "--namespaces="+nsB, "--log-level=debug", "--log-format=json", "--webhook-url="+hookRcv.srv.URL+"/hook", "--audit-log")
	waitRecorded(t, cs, nsB, "app")
	rotate(nsB)
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		return len(hookRcv.received()) == 1, fmt.Sprintf("%d webhooks received", len(hookRcv.received()))
	})
	b.waitIdle(t, 2)

	meta, err := cs.CoreV1().ConfigMaps(nsA).Get(ctx, "reloader-meta-info", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reloader-meta-info was not published, so it cannot be searched: %v", err)
	}
	logA, logB := readLog(t, a.LogPath()), readLog(t, b.LogPath())
	if !strings.Contains(logA, "reloaded") || !strings.Contains(logB, `"msg":"sent webhook instead of reloading"`) || !strings.Contains(logB, `"level":"DEBUG"`) {
		t.Fatalf("the logs do not show the work at debug level; the search would prove nothing:\nA:\n%s\nB:\n%s", logA, logB)
	}
	auditA := readLog(t, auditPath)
	checkAuditTrail(t, auditA, logA, logB, nsA)
	wrote := asJSON(t, getDeployment(t, cs, nsA, "app")) + asJSON(t, getDeployment(t, cs, nsB, "app")) +
		asJSON(t, getDeployment(t, cs, nsA, "gated")) + asJSON(t, getDeployment(t, cs, nsA, "notified"))
	places := map[string]string{
		"audit trail":                    auditA,
		"text log at debug level":        logA,
		"JSON log at debug level":        logB,
		"Events":                         asJSON(t, listEvents(t, cs, nsA, metav1.ListOptions{}).Items) + asJSON(t, listEvents(t, cs, nsB, metav1.ListOptions{}).Items),
		"/metrics":                       a.scrape(t) + b.scrape(t),
		"reloader-meta-info":             asJSON(t, meta),
		"alert bodies":                   strings.Join(alertsRcv.received(), "\n"),
		"webhook bodies":                 strings.Join(hookRcv.received(), "\n"),
		"workloads the controller wrote": wrote,
	}
	key, err := cs.CoreV1().Secrets(nsA).Get(ctx, fingerprint.DefaultSecretName, metav1.GetOptions{})
	if err != nil || len(key.Data[fingerprint.DataKey]) == 0 || !strings.Contains(logA, "per-key fingerprints are keyed") {
		t.Fatalf("A made no fingerprint key (%v), so its absence from the output would prove nothing", err)
	}
	for where, text := range places {
		for _, c := range []string{before, after, cmValue, string(key.Data[fingerprint.DataKey])} {
			for form, s := range canaryForms(c) {
				if strings.Contains(text, s) {
					t.Errorf("a planted value appears, %s, in the %s", form, where)
				}
			}
		}
	}
	checkHashExposureAsDocumented(t, cs, nsA, after)
}

// plantApproval adds, beside app, a workload whose reloads wait for
// approval and a notify-only one (docs/approval.md): their Events, metric
// series and alerts name the change by hash prefixes and field managers,
// and are searched with the rest.
func plantApproval(t *testing.T, ns string) {
	t.Helper()
	cs := cp.AdminClient(t)
	for name, mode := range map[string]string{"gated": "required", "notified": "notify-only"} {
		tmpl := reloadertest.PodTemplate(name, corev1.Container{Name: "app",
			EnvFrom: []corev1.EnvFromSource{reloadertest.EnvFromSecret("db-password"), reloadertest.EnvFromConfigMap("settings")}})
		createDeployment(t, cs, ns, reloadertest.Deployment(name, map[string]string{
			"reloader.stakater.com/auto": "true", "reloader.stakater.com/approval": mode}, tmpl))
	}
}

// waitApprovalReports waits until the change awaiting approval and the one
// notified have been reported, so the search covers them.
func waitApprovalReports(t *testing.T, r *reloaderProc, ns string) {
	t.Helper()
	cs := cp.AdminClient(t)
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		awaiting := listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=ReloadAwaitingApproval,involvedObject.name=gated"}).Items
		notified := listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=ReloadNotified,involvedObject.name=notified"}).Items
		series := r.metric(t, "reloader_reload_awaiting_approval{")
		return len(awaiting) == 1 && len(notified) == 1 && series == 1,
			fmt.Sprintf("%d ReloadAwaitingApproval and %d ReloadNotified Events, %v series awaiting approval", len(awaiting), len(notified), series)
	})
}

// SECURITY.md says what the workloads do carry: the SHA-1 of the data, for
// compatibility, in the applied-hashes record and (annotations strategy) in
// last-reloaded-from, but no STAKATER_* variable in the pod template. This
// holds it to that, both ways.
func checkHashExposureAsDocumented(t *testing.T, cs kubernetes.Interface, ns, value string) {
	t.Helper()
	d := getDeployment(t, cs, ns, "app")
	h := hashOfSecret(map[string]string{"password": value})
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if strings.HasPrefix(e.Name, "STAKATER_") {
				t.Errorf("annotations strategy wrote %s into the pod template env", e.Name)
			}
		}
	}
	if !strings.Contains(d.Annotations["reloader.dev/applied-hashes"], h) {
		t.Errorf("the applied-hashes record lacks the Secret's SHA-1, unlike what SECURITY.md states: %q", d.Annotations["reloader.dev/applied-hashes"])
	}
	if !strings.Contains(d.Spec.Template.Annotations["reloader.stakater.com/last-reloaded-from"], h) {
		t.Errorf("last-reloaded-from lacks the Secret's SHA-1, unlike what SECURITY.md states: %q", d.Spec.Template.Annotations["reloader.stakater.com/last-reloaded-from"])
	}
}

func readLog(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The audit trail (--audit-log) is JSON lines on stdout, apart from the logs
// on stderr: the reload of the rotated Secret names its resourceVersion, the
// field manager of the rotation, hash prefixes and the strategy; the webhook
// mode's delivery is a line too; the Reloaded Event names the manager.
func checkAuditTrail(t *testing.T, stdout, stderrA, logB, nsA string) {
	t.Helper()
	var reloaded *audit.Record
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil || r.Schema != audit.Schema {
			t.Errorf("stdout holds a line that is not an audit record (%v): %s", err, line)
			continue
		}
		if r.Decision == audit.Reloaded && r.Resource.Name == "db-password" {
			reloaded = &r
		}
	}
	switch {
	case reloaded == nil:
		t.Fatalf("no audit record of the reload for Secret db-password:\n%s", stdout)
	case reloaded.Workload != audit.Object{Kind: "Deployment", Namespace: nsA, Name: "app"},
		reloaded.Resource.Kind != "Secret" || reloaded.Resource.ResourceVersion == "",
		reloaded.ChangedBy == nil || reloaded.ChangedBy.Manager != "secret-rotator" || reloaded.ChangedBy.Operation != "Update",
		len(reloaded.OldHash) != audit.HashPrefixLen || len(reloaded.NewHash) != audit.HashPrefixLen || reloaded.OldHash == reloaded.NewHash,
		reloaded.Strategy != "annotations", reloaded.Reason != "changed":
		t.Errorf("the reload's audit record is incomplete: %+v (changedBy %+v)", *reloaded, reloaded.ChangedBy)
	}
	if strings.Contains(stderrA, audit.Schema) {
		t.Errorf("audit records were written to stderr, among the logs")
	}
	if !strings.Contains(logB, `"decision":"webhook"`) {
		t.Errorf("--webhook-url mode wrote no audit record of the delivery:\n%s", logB)
	}
	cs := cp.AdminClient(t)
	found := false
	for _, e := range listEvents(t, cs, nsA, metav1.ListOptions{FieldSelector: "reason=Reloaded"}).Items {
		found = found || strings.HasSuffix(e.Message, " (changed by secret-rotator)")
	}
	if !found {
		t.Errorf("no Reloaded Event names the field manager of the change")
	}
}

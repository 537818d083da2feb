package controller_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/alerts"
	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/test/reloadertest"
	"github.com/reloader-dev/reloader/test/tools"
)

// changeIDPattern matches a change identifier (decide.ChangeID).
var changeIDPattern = regexp.MustCompile(`r-[0-9a-f]{16}`)

// approvalDoc is docs/approval.md's examples, each a shell line.
type approvalDoc struct{ require, approve, notifyOnly, explain string }

func readApprovalDoc(t *testing.T) approvalDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "approval.md"))
	if err != nil {
		t.Fatal(err)
	}
	var doc approvalDoc
	inShell := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "```"):
			inShell = line == "```sh"
			continue
		case !inShell || line == "":
			continue
		}
		slot := map[bool]*string{
			strings.Contains(line, "/approval=required"):    &doc.require,
			strings.Contains(line, "/approval=notify-only"): &doc.notifyOnly,
			strings.Contains(line, "/approve="):             &doc.approve,
			strings.Contains(line, "reloader explain "):     &doc.explain,
		}[true]
		if slot == nil || *slot != "" {
			t.Fatalf("docs/approval.md: the example %q is not run by this test", line)
		}
		*slot = line
	}
	if doc.require == "" || doc.approve == "" || doc.notifyOnly == "" || doc.explain == "" {
		t.Fatalf("docs/approval.md lacks an example this test runs: %+v", doc)
	}
	return doc
}

// run runs a documented command in ns: kubectl as written, `kubectl
// reloader` as the reloader binary (the plugin is the same binary), with
// the test's kubeconfig; change, when set, replaces the documented change
// identifier.
func (doc approvalDoc) run(t *testing.T, kubectl, line, ns, change string) string {
	t.Helper()
	if change != "" {
		line = changeIDPattern.ReplaceAllString(line, change)
	}
	args := strings.Fields(line)[1:]
	bin := kubectl
	if args[0] == "reloader" {
		bin, args = reloaderBin, append(args[1:], "--options-from=flags")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "-n", ns, "--kubeconfig="+cp.AdminKubeconfig)...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil && !strings.Contains(line, "reloader explain") {
		t.Fatalf("%s: %v\n%s", line, err, out.String())
	}
	return out.String()
}

// TestApprovalDocExamples runs docs/approval.md as a person would. A
// workload that requires approval does not roll for a due change, says so
// (Event, metric, explain) and rolls exactly once after its change is
// approved; a second change before approval makes a new change whose own
// approval is needed, the first approval no longer applying; the audit
// line of the reload names the approver's field manager. A notify-only
// workload announces each change (Event, alert, metric) and is never
// rolled.
func TestApprovalDocExamples(t *testing.T) {
	requireControlPlane(t)
	t.Parallel()
	ctx := ctxFor(t)
	kubectl, err := tools.Binary(ctx, tools.ControlPlane, "kubectl")
	if err != nil {
		t.Fatal(err)
	}
	doc := readApprovalDoc(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("cfg", map[string]string{"k": "1"}))
	for _, name := range []string{"api", "audit-log"} {
		createDeployment(t, cs, ns, reloadertest.Deployment(name, auto(), usesConfigMap(name, "cfg")))
	}
	doc.run(t, kubectl, doc.require, ns, "")
	doc.run(t, kubectl, doc.notifyOnly, ns, "")
	rcv := newReceiver(t, 0)
	auditPath := filepath.Join(t.TempDir(), "stdout")
	r := &reloaderProc{reloadertest.Start(t, reloadertest.Options{Binary: reloaderBin, Kubeconfig: cp.AdminKubeconfig, StdoutPath: auditPath,
		Env:  []string{"ALERT_ON_RELOAD=true", "ALERT_SINK=json", "ALERT_WEBHOOK_URL=" + rcv.srv.URL + "/alert"},
		Args: []string{"--namespaces=" + ns, "--audit-log"}})}
	waitRecorded(t, cs, ns, "api")
	waitRecorded(t, cs, ns, "audit-log")

	setConfig(t, cs, ns, "2")
	first := waitAwaiting(t, cs, ns, nil)
	checkAwaitingSeries(t, r, ns, first, true)
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		n := r.metric(t, "reloader_reload_notified_total")
		return n == 1, fmt.Sprintf("reloader_reload_notified_total %v, want 1", n)
	})
	if out := doc.run(t, kubectl, doc.explain, ns, ""); !strings.Contains(out, "waiting for approval of change "+first) {
		t.Errorf("explain does not show change %s waiting:\n%s", first, out)
	}
	r.waitIdle(t, 2)
	if rev := revision(t, cs, ns, "api"); rev != 1 {
		t.Fatalf("rolled before approval: revision %d", rev)
	}

	// A newer change before approval supersedes the first.
	setConfig(t, cs, ns, "3")
	second := waitAwaiting(t, cs, ns, []string{first})
	checkAwaitingSeries(t, r, ns, first, false)
	checkAwaitingSeries(t, r, ns, second, true)
	syncs := r.metric(t, "reloader_workload_syncs_total")
	doc.run(t, kubectl, doc.approve, ns, first)
	r.waitIdle(t, int(syncs)+1)
	time.Sleep(2 * time.Second)
	if rev := revision(t, cs, ns, "api"); rev != 1 {
		t.Fatalf("the first change's approval rolled the newer change: revision %d", rev)
	}

	doc.run(t, kubectl, doc.approve, ns, second)
	waitRevision(t, cs, ns, "api", 2, 3*time.Second)
	checkAwaitingSeries(t, r, ns, second, false)
	checkApprovedAudit(t, readLog(t, auditPath), ns, second)
	checkNotifyOnly(t, r, rcv, ns)
}

func setConfig(t *testing.T, cs kubernetes.Interface, ns, v string) {
	t.Helper()
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(context.Background(), reloadertest.ConfigMap("cfg", map[string]string{"k": v}),
		metav1.UpdateOptions{FieldManager: "config-writer"}); err != nil {
		t.Fatal(err)
	}
}

// waitAwaiting waits for a ReloadAwaitingApproval Event on api naming a
// change other than seen, checks what it names, and returns the change.
func waitAwaiting(t *testing.T, cs kubernetes.Interface, ns string, seen []string) string {
	t.Helper()
	var id, msg string
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		for _, e := range listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=ReloadAwaitingApproval,involvedObject.name=api"}).Items {
			if found := changeIDPattern.FindString(e.Message); found != "" && !strings.Contains(strings.Join(seen, ","), found) {
				id, msg = found, e.Message
				return true, ""
			}
		}
		return false, fmt.Sprintf("no ReloadAwaitingApproval Event on api for a change other than %v", seen)
	})
	for _, want := range []string{"'cfg' of type 'CONFIGMAP' (changed, hash ", "changed by config-writer",
		"kubectl annotate deployment/api -n " + ns + " reloader.stakater.com/approve=" + id + " --overwrite"} {
		if !strings.Contains(msg, want) {
			t.Errorf("ReloadAwaitingApproval Event %q lacks %q", msg, want)
		}
	}
	return id
}

// checkAwaitingSeries checks that the gauge names change (resource, both
// hash prefixes, the field manager) while it waits, and has no series for
// it once it does not.
func checkAwaitingSeries(t *testing.T, r *reloaderProc, ns, change string, waiting bool) {
	t.Helper()
	series := regexp.MustCompile(`reloader_reload_awaiting_approval\{change="` + change + `",changed_by="config-writer",namespace="` + ns +
		`",new_hash="[0-9a-f]{12}",old_hash="[0-9a-f]{12}",resource="configmap/cfg",workload="api",workload_kind="Deployment"\} 1`)
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		found := series.MatchString(r.scrape(t))
		return found == waiting, fmt.Sprintf("series of change %s present: %v, want %v", change, found, waiting)
	})
}

// checkApprovedAudit checks the audit line of the approved reload: the
// change and the approver's field manager ("alice", as the doc's example
// gives kubectl).
func checkApprovedAudit(t *testing.T, stdout, ns, change string) {
	t.Helper()
	var reloaded []audit.Record
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var rec audit.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("an audit line does not parse (%v): %s", err, line)
		}
		if rec.Decision == audit.Reloaded && rec.Workload.Name == "api" {
			reloaded = append(reloaded, rec)
		}
	}
	if len(reloaded) != 1 {
		t.Fatalf("%d audit lines of reloads of api, want 1:\n%s", len(reloaded), stdout)
	}
	rec := reloaded[0]
	if rec.Change != change || rec.ApprovedBy == nil || rec.ApprovedBy.Manager != "alice" || rec.ApprovedBy.Operation != "Update" ||
		rec.ChangedBy == nil || rec.ChangedBy.Manager != "config-writer" {
		t.Errorf("the approved reload's audit line: %s", asJSON(t, rec))
	}
	if !strings.Contains(stdout, `"decision":"awaiting-approval"`) || !strings.Contains(stdout, `"decision":"notified"`) {
		t.Errorf("no audit line of the waiting or of the notified change:\n%s", stdout)
	}
}

// checkNotifyOnly checks that audit-log was told of both changes (Events,
// alerts, metric) and never rolled.
func checkNotifyOnly(t *testing.T, r *reloaderProc, rcv *receiver, ns string) {
	t.Helper()
	cs := cp.AdminClient(t)
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		n := r.metric(t, "reloader_reload_notified_total")
		return n == 2, fmt.Sprintf("reloader_reload_notified_total %v, want 2", n)
	})
	if n := len(listEvents(t, cs, ns, metav1.ListOptions{FieldSelector: "reason=ReloadNotified,involvedObject.name=audit-log"}).Items); n != 2 {
		t.Errorf("%d ReloadNotified Events on audit-log, want 2", n)
	}
	d := getDeployment(t, cs, ns, "audit-log")
	if rev := revision(t, cs, ns, "audit-log"); rev != 1 || len(d.Spec.Template.Spec.Containers[0].Env) != 0 || len(d.Spec.Template.Annotations) != 0 {
		t.Errorf("the notify-only workload's template changed: revision %d, template %s", rev, asJSON(t, d.Spec.Template))
	}
	kinds := map[string]int{}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		kinds = map[string]int{}
		for _, body := range rcv.received() {
			var p alerts.Payload
			if err := json.Unmarshal([]byte(body), &p); err != nil {
				t.Fatalf("alert body %q: %v", body, err)
			}
			kinds[p.Kind+" "+p.Workload.Name]++
		}
		return kinds["ReloadNotified audit-log"] == 2 && kinds["Reloaded api"] == 1 && kinds["ReloadAwaitingApproval api"] == 2,
			fmt.Sprintf("alerts by kind and workload: %v", kinds)
	})
	if kinds["Reloaded audit-log"] != 0 {
		t.Errorf("an alert says audit-log was reloaded: %v", kinds)
	}
}

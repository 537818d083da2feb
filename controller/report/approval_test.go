package report

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"

	"github.com/reloader-dev/reloader/controller/alerts"
	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

type stubResources struct{}

func (stubResources) ChangedBy(refs.Kind, string, string, string) *audit.Writer {
	return &audit.Writer{Manager: "rotator"}
}

func (stubResources) Resource(refs.Kind, string, string) decide.State { return decide.State{} }

func waiting(newHash string) decide.Decision {
	rl := decide.Reload{Watched: decide.Watched{Resource: decide.Resource{Kind: refs.Secret, Name: "db"}, Hash: newHash,
		Baseline: decide.Baseline{Hash: "0123456789abcdef0123", Known: true}}}
	key := workload.Key{Kind: workload.Deployment, Namespace: "shop", Name: "api"}
	return decide.Decision{Reloads: []decide.Reload{rl}, Approval: decide.ApprovalRequired,
		ApprovalFrom: "reloader.stakater.com/approval on the metadata", ChangeID: decide.ChangeID(key, []decide.Reload{rl})}
}

// A change waiting for approval is told once: an Event naming it (hash
// prefixes, the field manager, the command that approves it), one series
// per resource and an alert. A newer change replaces the series and is told
// anew; a settled workload has none.
func TestAwaitingApprovalIsToldOncePerChange(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, metrics.Options{})
	events := record.NewFakeRecorder(10)
	var sent []alerts.Event
	r := New(Options{Recorder: events, Metrics: m, Resources: stubResources{}, Notify: func(e alerts.Event) { sent = append(sent, e) },
		Now: func() time.Time { return time.Unix(0, 0) }})
	v, err := workload.ViewOf(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"}})
	if err != nil {
		t.Fatal(err)
	}
	first, second := waiting("fedcba9876543210fedc"), waiting("aaaaaaaaaaaaaaaaaaaa")
	r.AwaitingApproval(v, first, "reloader.stakater.com/approve")
	r.AwaitingApproval(v, first, "reloader.stakater.com/approve")
	if n := len(events.Events); n != 1 {
		t.Fatalf("%d Events for one change told twice, want 1", n)
	}
	msg := <-events.Events
	for _, want := range []string{"'db' of type 'SECRET' (changed, hash 0123456789ab -> fedcba987654, changed by rotator)",
		"waits for approval of change " + first.ChangeID,
		"kubectl annotate deployment/api -n shop reloader.stakater.com/approve=" + first.ChangeID + " --overwrite"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Event %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "0123456789abcdef0123") || strings.Contains(msg, "fedcba9876543210fedc") {
		t.Errorf("Event %q carries more of a hash than its prefix", msg)
	}
	if len(sent) != 1 || sent[0].Kind != alerts.KindAwaitingApproval || sent[0].Change != first.ChangeID {
		t.Errorf("alerts %+v, want one asking approval of %s", sent, first.ChangeID)
	}
	r.AwaitingApproval(v, second, "reloader.stakater.com/approve")
	want := `change="` + second.ChangeID + `",changed_by="rotator",namespace="shop",new_hash="aaaaaaaaaaaa",old_hash="0123456789ab",resource="secret/db",workload="api",workload_kind="Deployment" 1`
	if got := awaitingSeries(t, reg); len(got) != 1 || got[0] != want {
		t.Errorf("series after a newer change %q, want only %q", got, want)
	}
	r.ApprovalSettled(v.Key())
	if got := awaitingSeries(t, reg); len(got) != 0 {
		t.Errorf("series once settled %q, want none", got)
	}
}

// awaitingSeries are reloader_reload_awaiting_approval's series as
// `label="value",... value`, labels sorted.
func awaitingSeries(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		if f.GetName() != "reloader_reload_awaiting_approval" {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+`="`+l.GetValue()+`"`)
			}
			out = append(out, strings.Join(labels, ",")+" "+strconv.FormatFloat(m.GetGauge().GetValue(), 'g', -1, 64))
		}
	}
	return out
}

package controller

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"

	"github.com/reloader-dev/reloader/controller/audit"
	"github.com/reloader-dev/reloader/controller/budget"
	"github.com/reloader-dev/reloader/controller/workload"
)

const approvalKey, approveKey = "reloader.stakater.com/approval", "reloader.stakater.com/approve"

// changeOf is the identifier of the change a controller with o finds due
// on d.
func changeOf(t *testing.T, o Options, d *appsv1.Deployment, objs ...any) string {
	t.Helper()
	v, err := workload.ViewOf(d)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := Inspect(o, v, append([]any{d}, objs...))
	if err != nil || dec.ChangeID == "" {
		t.Fatalf("no change due on %s: %v", v.Key(), err)
	}
	return dec.ChangeID
}

// approvedBy is d approved for change by manager, as kubectl annotate
// --field-manager records it.
func approvedBy(d *appsv1.Deployment, change, manager string) *appsv1.Deployment {
	d = d.DeepCopy()
	d.Annotations[approveKey] = change
	d.ManagedFields = append(d.ManagedFields, metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
		Time: &metav1.Time{Time: syncNow.Add(-time.Minute)}, FieldsType: "FieldsV1",
		FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:` + approveKey + `":{}}}}`)})
	return d
}

// A change waiting for approval writes nothing, is told once, takes no
// slot of the rollout budget and is not retried; approved, it is written
// after one GET of the live workload, whose approver the audit line names;
// an approval withdrawn on the live workload writes nothing; notify-only
// writes the record alone and tells the change.
func TestSyncWaitsForApprovalThenAppliesTheApprovedChange(t *testing.T) {
	before, after := configMap("v1"), configMap("v2")
	after.ResourceVersion = "11"
	gated := recorded(t, web(auto, "true", approvalKey, "required"), before)
	change := changeOf(t, Options{}, gated, after)
	rolling := recorded(t, web(auto, "true"), before)
	rolling.Name, rolling.UID, rolling.Generation = "other", "other-1", 2

	t.Run("waiting: nothing written, no slot, no retry, told once", func(t *testing.T) {
		f := newFixture(t, Options{Budget: budget.Options{Max: 1}}, gated, rolling, after)
		for range 2 {
			if r := f.sync("web"); r.requeueAfter != 0 || r.reloaded {
				t.Errorf("result %+v: a waiting change is neither retried nor reloaded", r)
			}
		}
		if w := f.writes(); len(w) != 0 {
			t.Errorf("writes %v, want none", w)
		}
		if got := strings.Join(f.reasons(), ","); got != "ReloadAwaitingApproval" {
			t.Errorf("Events %s, want one ReloadAwaitingApproval", got)
		}
		if n := len(f.c.budget.gate.Waiting(syncNow)); n != 0 {
			t.Errorf("%d reloads wait for a rollout slot, want none", n)
		}
	})

	t.Run("approved: one GET, the reload, the approver audited", func(t *testing.T) {
		var trail bytes.Buffer
		f := newFixture(t, Options{Audit: audit.New(&trail)}, approvedBy(gated, change, "alice"), after)
		if r := f.sync("web"); !r.reloaded {
			t.Fatalf("result %+v, want the approved change reloaded", r)
		}
		gets := 0
		for _, a := range f.cs.Actions() {
			if a.GetVerb() == "get" {
				gets++
			}
		}
		if w := f.writes(); gets != 1 || len(w) != 1 {
			t.Errorf("%d GETs and writes %v, want one GET and one patch", gets, w)
		}
		var rec audit.Record
		if err := json.Unmarshal(trail.Bytes(), &rec); err != nil {
			t.Fatalf("audit trail %q: %v", trail.String(), err)
		}
		if rec.Decision != audit.Reloaded || rec.Change != change || rec.ApprovedBy == nil || rec.ApprovedBy.Manager != "alice" {
			t.Errorf("audit line %s, want the reload of %s approved by alice", trail.String(), change)
		}
	})

	t.Run("approval withdrawn on the live workload: nothing written", func(t *testing.T) {
		f := newFixture(t, Options{}, approvedBy(gated, change, "alice"), after)
		live := approvedBy(gated, "r-0000000000000000", "bob")
		if err := f.cs.Tracker().Update(appsv1.SchemeGroupVersion.WithResource("deployments"), live, "apps"); err != nil {
			t.Fatal(err)
		}
		f.cs.ClearActions()
		if r, err := f.c.sync(context.Background(), workload.Key{Kind: workload.Deployment, Namespace: "apps", Name: "web"}); err != nil || r.reloaded || len(f.writes()) != 0 {
			t.Errorf("result %+v, error %v, writes %v: want nothing written", r, err, f.writes())
		}
	})

	t.Run("notify-only: the record alone, the change told", func(t *testing.T) {
		f := newFixture(t, Options{}, recorded(t, web(auto, "true", approvalKey, "notify-only"), before), after)
		f.sync("web")
		var patches []string
		for _, a := range f.cs.Actions() {
			if p, ok := a.(k8stesting.PatchAction); ok {
				patches = append(patches, string(p.GetPatch()))
			}
		}
		if len(patches) != 1 || strings.Contains(patches[0], "template") || !strings.Contains(patches[0], "applied-hashes") {
			t.Errorf("patches %q, want one of the record alone", patches)
		}
		if got := strings.Join(f.reasons(), ","); got != "ReloadNotified" {
			t.Errorf("Events %s, want one ReloadNotified", got)
		}
	})
}

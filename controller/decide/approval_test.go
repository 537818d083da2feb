package decide

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/workload"
)

// The approval verdicts sit after what stops or waits before resources
// (a gate, a stale view) and after "nothing due", and before storm control
// and the change window: a person approves while those hold, and the
// approved change then waits for them. A change is approved only by its own
// identifier, so a newer change needs a new approval; a mode that does not
// parse requires approval (fail closed) and is a problem; notify-only never
// reloads.
func TestApprovalVerdictsInOrder(t *testing.T) {
	due := &testReader{states: map[Resource]State{appCM: existing("c2"), creds: existing("s1")}}
	id := ChangeID(workload.Key{Kind: workload.Deployment, Namespace: "apps", Name: "web"},
		[]Reload{{Watched: Watched{Resource: appCM, Hash: "c2"}, Change: Changed}})
	older := ChangeID(workload.Key{Kind: workload.Deployment, Namespace: "apps", Name: "web"},
		[]Reload{{Watched: Watched{Resource: appCM, Hash: "c1.5"}, Change: Changed}})
	closed := func(t *testing.T) *Window {
		w, err := ParseWindow("0 0 1 1 * 1h")
		if err != nil {
			t.Fatal(err)
		}
		return w
	}(t)
	last := now.Add(-20 * time.Second).Format(time.RFC3339Nano)
	cases := []struct {
		name    string
		o       Options
		ann     []string
		r       Reader
		want    Step
		reason  string
		problem string
	}{
		{name: "nothing due: up to date, whatever the mode", ann: []string{names.Approval, "required"},
			r: &testReader{states: map[Resource]State{appCM: existing("c1"), creds: existing("s1")}}, want: UpToDate},
		{name: "required, not approved: waits", ann: []string{names.Approval, "required"}, want: AwaitApproval},
		{name: "required by --reload-approval: waits", o: Options{Approval: ApprovalRequired}, want: AwaitApproval},
		{name: "the annotation overrides the flag", o: Options{Approval: ApprovalRequired}, ann: []string{names.Approval, "none"}, want: ReloadNow},
		{name: "approved by its identifier: reloads", ann: []string{names.Approval, "required", names.Approve, id}, want: ReloadNow},
		{name: "approved on the pod template only: waits", ann: []string{names.Approval, "required"}, want: AwaitApproval},
		{name: "an earlier change's approval: waits", ann: []string{names.Approval, "required", names.Approve, older}, want: AwaitApproval},
		{name: "not approved, storm control holds: waits for approval first", o: Options{MinReloadInterval: time.Minute},
			ann: []string{names.Approval, "required", LastReload, last}, want: AwaitApproval},
		{name: "approved, storm control holds: held", o: Options{MinReloadInterval: time.Minute},
			ann: []string{names.Approval, "required", names.Approve, id, LastReload, last}, want: Hold, reason: HoldMinReloadInterval},
		{name: "approved, outside the window: held", o: Options{ChangeWindow: closed},
			ann: []string{names.Approval, "required", names.Approve, id}, want: Hold, reason: HoldChangeWindow},
		{name: "notify-only: notifies, even outside the window", o: Options{ChangeWindow: closed},
			ann: []string{names.Approval, "notify-only"}, want: Notify},
		{name: "notify-only ignores an approval", ann: []string{names.Approval, "notify-only", names.Approve, id}, want: Notify},
		{name: "a mode that does not parse requires approval", ann: []string{names.Approval, "requird"}, want: AwaitApproval,
			problem: names.Approval + ` on the metadata: "requird" is not an approval mode`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			if r == nil {
				r = due
			}
			v := deployment(t, with(append([]string{names.Auto, "true", annotations.Applied, recorded}, tc.ann...)...))
			if strings.Contains(tc.name, "pod template") {
				v.Template.Annotations = map[string]string{names.Approve: id}
			}
			d := Decide(tc.o, v, r, now)
			next := d.Next()
			if next.Step != tc.want || next.HoldReason != tc.reason {
				t.Errorf("step %d (%q), want %d (%q); change %s approved as %q", next.Step, next.HoldReason, tc.want, tc.reason, d.ChangeID, d.ApprovedAs)
			}
			if got := strings.Join(d.Problems, "; "); (tc.problem == "") != (got == "") || !strings.Contains(got, tc.problem) {
				t.Errorf("problems %q, want %q", got, tc.problem)
			}
		})
	}
}

// Stop and a stale view come before approval: a sync that stops or waits
// for its caches announces nothing.
func TestGatesAndStaleViewsComeBeforeApproval(t *testing.T) {
	d := Decision{Gate: GateNamespace, Approval: ApprovalRequired, Reloads: []Reload{{}}}
	if got := d.Next().Step; got != Stop {
		t.Errorf("a gate: step %d, want Stop", got)
	}
	d = Decision{Stale: []StaleView{{}}, Approval: ApprovalNotifyOnly, Reloads: []Reload{{}}}
	if got := d.Next().Step; got != Stale {
		t.Errorf("a stale view: step %d, want Stale", got)
	}
}

// The identifier is the same for the same change wherever and whenever it
// is derived, and differs for another new hash, another resource or another
// workload; it carries no hash in the clear.
func TestChangeIDIsDerivedFromTheChange(t *testing.T) {
	key := workload.Key{Kind: workload.Deployment, Namespace: "apps", Name: "web"}
	rl := func(res Resource, h string) Reload { return Reload{Watched: Watched{Resource: res, Hash: h}} }
	a := ChangeID(key, []Reload{rl(appCM, "c2"), rl(creds, "s2")})
	if b := ChangeID(key, []Reload{rl(creds, "s2"), rl(appCM, "c2")}); a != b {
		t.Errorf("the order of the reloads changed the identifier: %s, %s", a, b)
	}
	for name, other := range map[string]string{
		"a newer hash":   ChangeID(key, []Reload{rl(appCM, "c3"), rl(creds, "s2")}),
		"fewer reloads":  ChangeID(key, []Reload{rl(appCM, "c2")}),
		"other workload": ChangeID(workload.Key{Kind: workload.Deployment, Namespace: "apps", Name: "api"}, []Reload{rl(appCM, "c2"), rl(creds, "s2")}),
	} {
		if other == a {
			t.Errorf("%s gives the same identifier %s", name, a)
		}
	}
	if !strings.HasPrefix(a, "r-") || len(a) != 18 || strings.Contains(a, "c2") {
		t.Errorf("identifier %q: want r- and 16 hex digits", a)
	}
}

// The approver is the newest write that owns the approve annotation, from
// managedFields; none when no entry owns it.
func TestApproverIsTheNewestOwnerOfTheAnnotation(t *testing.T) {
	at := func(m string, min int, fields string) metav1.ManagedFieldsEntry {
		ts := metav1.NewTime(now.Add(time.Duration(min) * time.Minute))
		return metav1.ManagedFieldsEntry{Manager: m, Operation: metav1.ManagedFieldsOperationUpdate, Time: &ts,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
	}
	owns := `{"f:metadata":{"f:annotations":{"f:reloader.stakater.com/approve":{}}}}`
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		at("kube-controller-manager", 9, `{"f:status":{}}`),
		at("bob", 1, owns),
		at("alice", 5, owns),
		at("gitops", 7, `{"f:metadata":{"f:annotations":{"f:other":{}}}}`),
	}}}
	got := ApproverOf(d, names.Approve)
	if got == nil || got.Manager != "alice" || got.Operation != "Update" || !got.Time.Equal(now.Add(5*time.Minute)) {
		t.Errorf("approver %+v, want alice's Update at +5m", got)
	}
	d.ManagedFields = d.ManagedFields[:1]
	if got := ApproverOf(d, names.Approve); got != nil {
		t.Errorf("approver %+v where no entry owns the annotation", got)
	}
}

func FuzzParseApproval(f *testing.F) {
	for _, s := range []string{"", "none", "required", "notify-only", " required ", "Required", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseApproval(s)
		switch {
		case err != nil && a != ApprovalRequired:
			t.Errorf("%q: an invalid mode gives %q, want required (fail closed)", s, a)
		case err == nil && a != ApprovalNone && a != ApprovalRequired && a != ApprovalNotifyOnly:
			t.Errorf("%q: parsed to unknown mode %q", s, a)
		}
	})
}

// managedFields come from the apiserver, written by any client: whatever
// their bytes, reading the approver neither panics nor names anyone but
// the entry's manager.
func FuzzApproverOf(f *testing.F) {
	for _, s := range []string{`{"f:metadata":{"f:annotations":{"f:reloader.stakater.com/approve":{}}}}`, `{}`, `null`, `{"f:metadata":1}`, ``, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "m", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(raw))}}}}
		if a := ApproverOf(d, names.Approve); a != nil && a.Manager != "m" {
			t.Errorf("%q names approver %+v", raw, a)
		}
	})
}

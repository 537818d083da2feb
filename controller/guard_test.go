package controller

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/reloader-dev/reloader/controller/alerts"
	"github.com/reloader-dev/reloader/controller/workload"
)

// conflictFirst makes the first n patches of Deployments fail with a
// conflict, as the apiserver answers a write guarded by a resourceVersion
// another writer has moved; before each one, meanwhile runs (the other
// writer). It counts the patches that went through.
func conflictFirst(f *fixture, n int, meanwhile func()) *atomic.Int32 {
	var seen, passed atomic.Int32
	f.cs.PrependReactor("patch", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if int(seen.Add(1)) <= n {
			if meanwhile != nil {
				meanwhile()
			}
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", nil)
		}
		passed.Add(1)
		return false, nil, nil
	})
	return &passed
}

func (f *fixture) syncErr(name string) error {
	_, err := f.c.sync(context.Background(), workload.Key{Kind: workload.Deployment, Namespace: "apps", Name: name})
	return err
}

// A notify-only change is recorded before it is told, and the record is
// guarded like a reload: a writer whose view is older than the workload (a
// leader thawed past its lease) gets a conflict and tells nothing; the
// retry, from a fresh view, records and tells the change once.
func TestANotifyOnlyRecordIsGuardedAndToldOnlyOnceWritten(t *testing.T) {
	before, after := configMap("v1"), configMap("v2")
	after.ResourceVersion = "11"
	f := newFixture(t, Options{}, recorded(t, web(auto, "true", approvalKey, "notify-only"), before), after)
	passed := conflictFirst(f, 1, nil)

	if err := f.syncErr("web"); !apierrors.IsConflict(err) {
		t.Fatalf("sync on an older view: error %v, want the conflict (back to the workqueue)", err)
	}
	if got := f.reasons(); len(got) != 0 {
		t.Errorf("Events %v after a record lost to a conflict, want none: the change is not told until recorded", got)
	}
	for _, a := range f.cs.Actions() {
		if p, ok := a.(k8stesting.PatchAction); ok && !strings.Contains(string(p.GetPatch()), `"resourceVersion":"5"`) {
			t.Errorf("notify-only record %s has no resourceVersion guard", p.GetPatch())
		}
	}
	f.sync("web")
	if got := strings.Join(f.reasons(), ","); got != "ReloadNotified" || passed.Load() != 1 {
		t.Errorf("retry: Events %s and %d records written, want one ReloadNotified after one record", got, passed.Load())
	}
}

// After a webhook is delivered its record is written guarded too. A
// conflict does not send the webhook again: while the live workload still
// carries the record the change was decided from, the record is written on
// it; once another writer has recorded, this older record is dropped.
func TestAWebhooksRecordIsGuardedAndNeverSendsTwice(t *testing.T) {
	before, after := configMap("v1"), configMap("v2")
	after.ResourceVersion = "11"
	var sent atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { sent.Add(1) }))
	t.Cleanup(srv.Close)
	hook, err := alerts.NewWebhook(alerts.Options{URL: srv.URL, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	deployments := appsv1.SchemeGroupVersion.WithResource("deployments")
	for _, tc := range []struct {
		name        string
		newerRecord bool // another writer recorded between the decision and the write
		wantRecords int32
	}{
		{"the live record unchanged: written on the live object", false, 1},
		{"a newer record on the live object: ours dropped", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent.Store(0)
			orig := recorded(t, web(auto, "true"), before)
			f := newFixture(t, Options{Webhook: hook}, orig, after)
			passed := conflictFirst(f, 1, func() {
				live := orig.DeepCopy()
				live.ResourceVersion = "6"
				if tc.newerRecord {
					live.Annotations["reloader.dev/applied-hashes"] = "newer"
				}
				if err := f.cs.Tracker().Update(deployments, live, "apps"); err != nil {
					t.Error(err)
				}
			})
			if err := f.syncErr("web"); err != nil {
				t.Fatalf("sync: %v", err)
			}
			if n := sent.Load(); n != 1 {
				t.Errorf("webhook sent %d times, want once", n)
			}
			if n := passed.Load(); n != tc.wantRecords {
				t.Errorf("%d records written after the conflict, want %d", n, tc.wantRecords)
			}
			got, err := f.cs.Tracker().Get(deployments, "apps", "web")
			if err != nil {
				t.Fatal(err)
			}
			rec := got.(*appsv1.Deployment).Annotations["reloader.dev/applied-hashes"]
			if tc.newerRecord && rec != "newer" {
				t.Errorf("record %q: the older record replaced the newer one", rec)
			}
		})
	}
}

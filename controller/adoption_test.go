package controller

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reloader-dev/reloader/controller/busy"
	"github.com/reloader-dev/reloader/controller/workload"
)

// An adoption record whose turn comes while reloads are being written waits
// for them, without using a write slot; once they have settled, the records
// held together take fresh slots one after another, so they are not all
// written at once at the end of the burst.
func TestAdoptionRecordsStepAsideWhileReloadsAreWritten(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	c := &Controller{
		o:         Options{Now: clock},
		adoptions: newAdoptionLimiter(1),
		busy:      busy.New(busy.Options{Settle: 50 * time.Millisecond, MaxHold: time.Minute, Now: clock}),
	}
	c.adoptions.SetBurstAt(now, 1)
	views := make([]workload.View, 3)
	for i := range views {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("app-%d", i), UID: types.UID(fmt.Sprint(i))}}
		v, err := workload.ViewOf(d)
		if err != nil {
			t.Fatal(err)
		}
		views[i] = v
	}
	pending := func(v workload.View) *pendingRecord { return c.keys.read(v.Key()).pendingRecord }

	end := c.busy.Begin()
	for _, v := range views {
		if wait := c.paceAdoption(v.Key(), v, "record", nil); wait != 50*time.Millisecond {
			t.Fatalf("%s: adoption wait while a reload is written = %v, want the settle time (50ms)", v.Key(), wait)
		}
		if p := pending(v); p == nil || !p.held || p.text != "record" {
			t.Fatalf("%s: pending record %+v, want the decided record, held", v.Key(), p)
		}
	}
	if tokens := c.adoptions.TokensAt(now); tokens != 1 {
		t.Fatalf("held records used write slots: %v tokens left, want 1", tokens)
	}

	end()
	now = now.Add(50 * time.Millisecond)
	var waits []time.Duration
	for _, v := range views {
		waits = append(waits, c.paceAdoption(v.Key(), v, "record", pending(v)))
	}
	if want := []time.Duration{0, time.Second, 2 * time.Second}; fmt.Sprint(waits) != fmt.Sprint(want) {
		t.Fatalf("waits of the released records at 1/s = %v, want %v (spread, not at once)", waits, want)
	}
}

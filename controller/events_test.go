package controller

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reloader-dev/reloader/controller/internal/busy"
)

// countingSink counts the Event writes that reach it.
type countingSink struct{ writes atomic.Int32 }

func (s *countingSink) Create(e *corev1.Event) (*corev1.Event, error) { s.writes.Add(1); return e, nil }
func (s *countingSink) Update(e *corev1.Event) (*corev1.Event, error) { s.writes.Add(1); return e, nil }
func (s *countingSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	s.writes.Add(1)
	return e, nil
}

// An Event is written once no reload is being written: never during one,
// and then without being lost.
func TestEventWritesWaitForTheReloadsInFlight(t *testing.T) {
	tr := busy.New(busy.Options{Settle: 10 * time.Millisecond})
	to := &countingSink{}
	sink := heldSink{ctx: context.Background(), sink: to, busy: tr}
	end := tr.Begin()

	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = sink.Create(&corev1.Event{})
		_, _ = sink.Patch(&corev1.Event{}, nil)
		_, _ = sink.Update(&corev1.Event{})
	}()
	select {
	case <-done:
		t.Fatal("Events were written while a reload was in flight")
	case <-time.After(100 * time.Millisecond):
	}
	if n := to.writes.Load(); n != 0 {
		t.Fatalf("%d Event writes reached the apiserver while a reload was in flight, want 0", n)
	}
	end()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Events still held 10s after the reload ended")
	}
	if n := to.writes.Load(); n != 3 {
		t.Fatalf("%d Event writes after the reload ended, want all 3", n)
	}
}

package busy

import (
	"context"
	"testing"
	"time"
)

// clock is a hand-moved clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTracker() (*Tracker, *clock) {
	c := &clock{t: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}
	return New(Options{Settle: 50 * time.Millisecond, MaxHold: 2 * time.Second, Now: c.now}), c
}

func TestNothingIsHeldWhenNoReloadIsBeingWritten(t *testing.T) {
	tr, _ := newTracker()
	if h := tr.Hold(); h != 0 {
		t.Fatalf("Hold with nothing written = %v, want 0", h)
	}
}

func TestBackgroundWritesWaitUntilReloadsHaveSettled(t *testing.T) {
	tr, c := newTracker()
	end := tr.Begin()
	if h := tr.Hold(); h != 50*time.Millisecond {
		t.Fatalf("Hold while a reload is in flight = %v, want the settle time (50ms)", h)
	}
	c.advance(10 * time.Millisecond)
	end()
	end() // a second call is harmless
	c.advance(20 * time.Millisecond)
	if h := tr.Hold(); h != 30*time.Millisecond {
		t.Fatalf("Hold 20ms after the last reload ended = %v, want the rest of the settle time (30ms)", h)
	}
	c.advance(30 * time.Millisecond)
	if h := tr.Hold(); h != 0 {
		t.Fatalf("Hold once settled = %v, want 0", h)
	}
}

func TestAHoldIsBoundedPerBusySpell(t *testing.T) {
	tr, c := newTracker()
	// A storm that never pauses: a reload always in flight.
	end := tr.Begin()
	for range 39 {
		c.advance(50 * time.Millisecond)
		next := tr.Begin()
		end()
		end = next
	}
	// 1.95 s into the spell: 50 ms of the 2 s bound left.
	if h := tr.Hold(); h != 50*time.Millisecond {
		t.Fatalf("Hold 1.95s into a busy spell = %v, want 50ms", h)
	}
	c.advance(50 * time.Millisecond)
	if h := tr.Hold(); h != 0 {
		t.Fatalf("Hold after the spell reached MaxHold = %v, want 0 (background writes go ahead, interleaved)", h)
	}
	// A quiet moment ends the spell; the next reload starts a new one that
	// holds again.
	end()
	c.advance(50 * time.Millisecond)
	end = tr.Begin()
	defer end()
	if h := tr.Hold(); h == 0 {
		t.Fatal("Hold in a new busy spell = 0, want a hold again")
	}
}

func TestWaitReturnsWhenSettledAndStopsWithItsContext(t *testing.T) {
	tr := New(Options{Settle: 20 * time.Millisecond})
	tr.Begin()() // a reload that has just ended
	if err := tr.Wait(context.Background()); err != nil {
		t.Fatalf("Wait after the reload settled: %v", err)
	}
	if h := tr.Hold(); h != 0 {
		t.Fatalf("Hold after Wait returned = %v, want 0", h)
	}

	end := tr.Begin() // never ends
	defer end()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := tr.Wait(ctx); err == nil {
		t.Fatal("Wait while a reload is in flight returned nil before its context ended")
	}
}

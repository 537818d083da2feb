// Package busy knows whether the controller is writing reloads, so that its
// background writes (Events, adoption records) step aside for a moment.
//
// A burst of 200 reloads on a loaded apiserver took 1.45x the bench floor's
// time with every Event written as the reloads went, and 1.27x with no Event
// written at all (bench/controller -scale 10x, 2026-12-06): the apiserver's
// writes are shared, and an Event is one more write per reload. Held for the
// length of the burst, the same Events cost the reloads nothing and still
// land a moment later.
//
// A hold is bounded per busy spell (Options.MaxHold): in a storm that never
// pauses, background writes go ahead interleaved once the spell has lasted
// that long, as if there were no tracker, so nothing waits for long and the
// Event queue never overflows.
package busy

import (
	"context"
	"sync"
	"time"
)

// Defaults of Options.
const (
	// DefaultSettle is how long after the last reload write the apiserver
	// counts as quiet: longer than the gap between two reloads of a burst
	// (their changes arrive within milliseconds), and short enough that
	// the Event of a reload is written well before the next change of a
	// steady stream (a Secret rotated every 100 ms held its Event into the
	// next reload at 100 ms: p99 9 -> 11.5 ms at the 10x tier).
	DefaultSettle = 50 * time.Millisecond
	// DefaultMaxHold bounds the hold of one busy spell.
	DefaultMaxHold = 2 * time.Second
)

// Options configure a Tracker; zero values take the defaults.
type Options struct {
	Settle  time.Duration
	MaxHold time.Duration
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
}

// Tracker counts reload writes in flight. Its zero value is not usable; use
// New.
type Tracker struct {
	o Options

	mu       sync.Mutex
	inflight int
	// lastDone is when the last reload write ended; spell is when the
	// current busy spell began (a reload write after a quiet moment).
	lastDone, spell time.Time
}

// New returns a Tracker with nothing in flight.
func New(o Options) *Tracker {
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	if o.MaxHold <= 0 {
		o.MaxHold = DefaultMaxHold
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Tracker{o: o}
}

// Begin marks a reload write in flight; call the returned func when it ends
// (successful or not).
func (t *Tracker) Begin() (end func()) {
	t.mu.Lock()
	now := t.o.Now()
	if t.quietAt(now) {
		t.spell = now
	}
	t.inflight++
	t.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			t.inflight--
			t.lastDone = t.o.Now()
			t.mu.Unlock()
		})
	}
}

// quietAt says whether no reload is in flight nor ended within Settle.
// Called with mu held.
func (t *Tracker) quietAt(now time.Time) bool {
	return t.inflight == 0 && now.Sub(t.lastDone) >= t.o.Settle
}

// Hold is how long a background write should wait before it is sent: 0 when
// the controller is quiet or its busy spell has lasted MaxHold already.
func (t *Tracker) Hold() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.o.Now()
	if t.quietAt(now) {
		return 0
	}
	left := t.spell.Add(t.o.MaxHold).Sub(now)
	if left <= 0 {
		return 0
	}
	wait := t.o.Settle
	if t.inflight == 0 {
		wait = t.lastDone.Add(t.o.Settle).Sub(now)
	}
	return min(wait, left)
}

// Wait blocks a background write until Hold is 0 or ctx ends. It returns
// ctx's error in the second case; the write may still be sent then (a
// shutting-down controller flushes its Events).
func (t *Tracker) Wait(ctx context.Context) error {
	for {
		d := t.Hold()
		if d <= 0 {
			return nil
		}
		timer := time.NewTimer(d)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C:
		}
	}
}

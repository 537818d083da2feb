package decide

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Window is a change window: reloads are applied only while one is open.
// It is written as a cron schedule of the window's starts, with an
// optional CRON_TZ=<IANA zone> prefix (UTC otherwise), followed by how long
// it stays open; several are separated by ";":
//
//	CRON_TZ=Europe/Berlin 0 22 * * 1-5 8h; CRON_TZ=Europe/Berlin 0 10 * * 6,0 4h
//
// The syntax is the one Kubernetes CronJobs take, so a platform team reads
// it without learning another.
type Window struct {
	Spec  string
	parts []windowPart
}

type windowPart struct {
	schedule cron.Schedule
	open     time.Duration
}

// ParseWindow parses s; "" and "always" are no window (always open).
func ParseWindow(s string) (*Window, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "always" {
		return nil, nil
	}
	w := &Window{Spec: s}
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		i := strings.LastIndexAny(part, " \t")
		if i < 0 {
			return nil, fmt.Errorf("change window %q: want a cron schedule and a duration, e.g. \"CRON_TZ=Europe/Berlin 0 22 * * 1-5 8h\"", part)
		}
		open, err := time.ParseDuration(part[i+1:])
		if err != nil || open <= 0 {
			return nil, fmt.Errorf("change window %q: %q is not a positive duration (how long the window stays open)", part, part[i+1:])
		}
		expr := strings.TrimSpace(part[:i])
		if strings.Contains(expr, "@every") {
			return nil, fmt.Errorf("change window %q: @every counts from whenever it is asked, so it cannot say when a window opens; give a schedule", part)
		}
		sched, err := cron.ParseStandard(expr)
		if err != nil {
			return nil, fmt.Errorf("change window %q: schedule %q: %w", part, strings.TrimSpace(part[:i]), err)
		}
		w.parts = append(w.parts, windowPart{schedule: sched, open: open})
	}
	return w, nil
}

// OpensIn is 0 when a window is open at now, else how long until the next
// one opens. A window that never opens again (a schedule with no next
// time) yields a negative duration.
func (w *Window) OpensIn(now time.Time) time.Duration {
	if w == nil {
		return 0
	}
	var next time.Time
	for _, p := range w.parts {
		// Open when a start falls in (now - open, now].
		for s := p.schedule.Next(now.Add(-p.open)); !s.IsZero() && !s.After(now); s = p.schedule.Next(s) {
			if s.Add(p.open).After(now) {
				return 0
			}
		}
		if s := p.schedule.Next(now); !s.IsZero() && (next.IsZero() || s.Before(next)) {
			next = s
		}
	}
	if next.IsZero() {
		return -1
	}
	return next.Sub(now)
}

// window is the workload's change window: its annotation, else
// --change-window (nil: always open), and where it is set. An annotation
// that does not parse is an error naming it.
func (d *decider) window() (*Window, string, error) {
	value, on, ok := d.o.Names.ChangeWindowFor(d.w)
	if !ok {
		return d.o.ChangeWindow, "--change-window", nil
	}
	from := d.o.Names.ChangeWindow + " on the " + on
	w, err := ParseWindow(value)
	if err != nil {
		return &Window{Spec: value}, from, fmt.Errorf("%s: %w; reloads wait until it is fixed", from, err)
	}
	return w, from, nil
}

// holdForWindow holds the due reloads of out until w opens. An invalid
// window, or one that never opens again, holds them until it is changed
// (fail closed).
func (d *decider) holdForWindow(out *Decision, w *Window, from string, err error) {
	if w == nil {
		return
	}
	out.WindowSpec, out.WindowFrom = w.Spec, from
	if err != nil {
		out.WindowInvalid = true
		return
	}
	switch in := w.OpensIn(d.now); {
	case in < 0:
		out.Problems = append(out.Problems, fmt.Sprintf("%s %q never opens again; reloads wait until it is changed", from, w.Spec))
		out.WindowInvalid = true
	case in > 0:
		out.WindowOpensIn = in
	}
}

// Package progress reports long work: a redrawn bar on a terminal, and on
// anything else (CI logs, pipes) a few plain lines that stay readable.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Reporter receives progress; implementations are safe for concurrent use.
type Reporter interface {
	// Phase starts a unit of work of total units (bytes when bytes is set).
	Phase(name string, total int64, bytes bool)
	// Add records n more units done.
	Add(n int64)
	// Logf reports an event worth a line of its own.
	Logf(format string, args ...any)
	// Item reports one artifact of the phase finished (size units of it):
	// a line of its own where there is no bar to watch, nothing on a
	// terminal, where the bar shows it.
	Item(what string, size int64)
	// Done ends the current phase.
	Done()
}

// Discard reports nothing.
type Discard struct{}

func (Discard) Phase(string, int64, bool) {}
func (Discard) Add(int64)                 {}
func (Discard) Logf(string, ...any)       {}
func (Discard) Item(string, int64)        {}
func (Discard) Done()                     {}

// Options configures New.
type Options struct {
	// Terminal draws a bar redrawn in place; otherwise lines are written
	// at most every Interval.
	Terminal bool
	Interval time.Duration
	Now      func() time.Time
}

// New reports to w.
func New(w io.Writer, opts Options) Reporter {
	if opts.Interval == 0 {
		opts.Interval = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &writer{w: w, opts: opts}
}

type writer struct {
	mu         sync.Mutex
	w          io.Writer
	opts       Options
	name       string
	total, n   int64
	bytes      bool
	start      time.Time
	lastReport time.Time
}

func (p *writer) Phase(name string, total int64, bytes bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name, p.total, p.n, p.bytes = name, total, 0, bytes
	p.start = p.opts.Now()
	p.lastReport = p.start
	if !p.opts.Terminal {
		fmt.Fprintf(p.w, "%s: %s to do\n", name, p.amount(total))
	}
}

func (p *writer) Add(n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n += n
	now := p.opts.Now()
	if p.opts.Terminal {
		if now.Sub(p.lastReport) >= 100*time.Millisecond {
			p.lastReport = now
			p.drawBar()
		}
		return
	}
	if now.Sub(p.lastReport) >= p.opts.Interval {
		p.lastReport = now
		fmt.Fprintf(p.w, "%s: %s of %s%s\n", p.name, p.amount(p.n), p.amount(p.total), p.pace(now))
	}
}

// pace is ", <rate>/s, ETA <d>" for a byte phase under way, once a rate
// can be told.
func (p *writer) pace(now time.Time) string {
	el := now.Sub(p.start)
	if !p.bytes || el < 100*time.Millisecond || p.n <= 0 {
		return ""
	}
	rate := float64(p.n) / el.Seconds()
	s := ", " + Bytes(int64(rate)) + "/s"
	if p.total > p.n {
		eta := time.Duration(float64(p.total-p.n) / rate * float64(time.Second))
		s += ", ETA " + eta.Round(time.Second).String()
	}
	return s
}

func (p *writer) Item(what string, size int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.opts.Terminal {
		return
	}
	fmt.Fprintf(p.w, "  %s (%s)\n", what, p.amount(size))
}

func (p *writer) drawBar() {
	const width = 30
	frac := 1.0
	if p.total > 0 {
		frac = float64(p.n) / float64(p.total)
	}
	if frac > 1 {
		frac = 1
	}
	filled := int(frac * width)
	of := ""
	if p.total > 0 {
		of = " of " + p.amount(p.total)
	}
	fmt.Fprintf(p.w, "\r%-18s [%s%s] %3.0f%% %s%s%s\033[K", p.name, strings.Repeat("=", filled), strings.Repeat(" ", width-filled), frac*100, p.amount(p.n), of, p.pace(p.opts.Now()))
}

func (p *writer) Logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.opts.Terminal {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, format+"\n", args...)
	if p.opts.Terminal && p.name != "" {
		p.drawBar()
	}
}

func (p *writer) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.name == "" {
		return
	}
	el := p.opts.Now().Sub(p.start).Round(time.Millisecond)
	if p.opts.Terminal {
		p.drawBar()
		fmt.Fprintf(p.w, " %s\n", el)
	} else {
		fmt.Fprintf(p.w, "%s: done, %s in %s\n", p.name, p.amount(p.n), el)
	}
	p.name = ""
}

func (p *writer) amount(n int64) string {
	if !p.bytes {
		return fmt.Sprint(n)
	}
	return Bytes(n)
}

// Bytes renders a byte count for people: B, KiB, MiB or GiB.
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

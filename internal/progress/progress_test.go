package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// Without a terminal: a line per phase, a line per finished artifact, and
// at most a line per interval with bytes, rate and ETA.
func TestLinesWithRateAndETA(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	var b bytes.Buffer
	p := New(&b, Options{Interval: time.Second, Now: c.now})
	p.Phase("blobs", 10<<20, true)
	c.t = c.t.Add(2 * time.Second)
	p.Add(4 << 20)
	p.Item("pushed reloader@sha256:abc", 4<<20)
	c.t = c.t.Add(500 * time.Millisecond)
	p.Add(1 << 20) // within the interval: no line
	p.Done()
	got := b.String()
	for _, want := range []string{
		"blobs: 10.0 MiB to do\n",
		"blobs: 4.0 MiB of 10.0 MiB, 2.0 MiB/s, ETA 3s\n",
		"  pushed reloader@sha256:abc (4.0 MiB)\n",
		"blobs: done, 5.0 MiB in 2.5s\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "\n") != 4 {
		t.Errorf("want 4 lines:\n%s", got)
	}
}

// On a terminal: one bar redrawn in place, with bytes, rate and ETA, and no
// line per artifact.
func TestTerminalBarShowsRateAndETA(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	var b bytes.Buffer
	p := New(&b, Options{Terminal: true, Now: c.now})
	p.Phase("blobs", 100<<20, true)
	c.t = c.t.Add(10 * time.Second)
	p.Add(25 << 20)
	p.Item("pushed x", 1)
	got := b.String()
	if !strings.HasPrefix(got, "\r") || !strings.Contains(got, " 25% 25.0 MiB of 100.0 MiB, 2.5 MiB/s, ETA 30s") || strings.Contains(got, "pushed") {
		t.Errorf("bar %q", got)
	}
}

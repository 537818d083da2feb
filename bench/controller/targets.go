package main

import (
	"fmt"
	"strings"
)

// A Target is one limit the driver checks on a contestant's figure: its
// median (or, with Worst, its worst repetition), either absolute or as a
// multiple of another contestant's median. What the report prints as a
// target is exactly this list, so nothing is shown as a target that is not
// checked.
type Target struct {
	// Figure is a key of figures ("burst", "latency_p99", ...).
	Figure string `json:"figure"`
	// Who is the contestant whose figure is judged.
	Who string `json:"contestant"`
	// Over, when set, makes Max a ratio: Who's median over Over's.
	Over string  `json:"over,omitempty"`
	Max  float64 `json:"max"`
	// Worst judges the largest repetition instead of the median: for
	// figures that must never happen, such as a LIST after the initial sync.
	Worst bool `json:"worst,omitempty"`
}

// keysOnlyFigures are what the run with --reload-on-used-keys-only is held to
// against the same controller without it: per-key records must not cost
// latency, burst time or memory.
var keysOnlyFigures = []string{"latency_p50", "latency_p99", "burst", "rss", "peak_rss"}

// targetPresets are the targets of each scale (the issue's, #53); small and
// tiny have none: they are for quick looks and the driver's own test.
func targetPresets(scale string) []Target {
	var t []Target
	switch scale {
	case "full":
		t = []Target{
			{Figure: "burst", Who: contestantController, Over: contestantFloor, Max: 1.3},
			{Figure: "latency_p99", Who: contestantController, Over: contestantFloor, Max: 1.6},
		}
	case "10x":
		t = []Target{
			{Figure: "burst", Who: contestantController, Over: contestantFloor, Max: 1.3},
			{Figure: "latency_p99", Who: contestantController, Over: contestantFloor, Max: 1.5},
			{Figure: "peak_rss", Who: contestantController, Max: 80},
			{Figure: "ready", Who: contestantController, Max: 3},
			{Figure: "first_after_ready", Who: contestantController, Max: 1},
			{Figure: "list_per_change", Who: contestantController, Max: 0, Worst: true},
		}
	default:
		return nil
	}
	for _, f := range keysOnlyFigures {
		t = append(t, Target{Figure: f, Who: contestantKeys, Over: contestantController, Max: 1.1})
	}
	// The run with a declared share of workloads (-declared-share) is held
	// to the controller's without it: within 10% of its p99 and RSS (#52).
	for _, f := range []string{"latency_p99", "rss"} {
		t = append(t, Target{Figure: f, Who: contestantDeclared, Over: contestantController, Max: 1.1})
	}
	return t
}

// String says what the target asks, in the report's words.
func (t Target) String() string {
	name, unit := figureName(t.Figure)
	of := t.Who + "'s " + name
	if t.Worst {
		of = "every " + t.Who + " repetition's " + name
	}
	if t.Over != "" {
		return fmt.Sprintf("%s <= %.2fx %s's", of, t.Max, t.Over)
	}
	return fmt.Sprintf("%s <= %s%s", of, trimFloat(t.Max), unitSuffix(unit))
}

// Miss is a target not met, with what was measured.
type Miss struct {
	Target Target `json:"target"`
	// Got is the figure, or the ratio of medians; NaN-free: a figure not
	// measured is a miss with Measured false.
	Got      float64 `json:"got"`
	Measured bool    `json:"measured"`
}

func (m Miss) String() string {
	if !m.Measured {
		return m.Target.String() + ": not measured"
	}
	_, unit := figureName(m.Target.Figure)
	got := trimFloat(m.Got) + unitSuffix(unit)
	if m.Target.Over != "" {
		got = fmt.Sprintf("%.2fx", m.Got)
	}
	return fmt.Sprintf("%s: got %s", m.Target, got)
}

// Applicable are the targets whose contestants ran: a run without the floor
// (-floor=false), without the per-key run (-keys-only=false) or without a
// declared share (-declared-share) is not judged
// against them, and does not print them.
func Applicable(targets []Target, summary map[string]map[string]Spread) []Target {
	var out []Target
	for _, t := range targets {
		if summary[t.Who] == nil || (t.Over != "" && summary[t.Over] == nil) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// Misses judges the applicable targets on the summary (per contestant and
// figure, the spread over repetitions): figures in, missed targets out.
func Misses(targets []Target, summary map[string]map[string]Spread) []Miss {
	var out []Miss
	for _, t := range Applicable(targets, summary) {
		s := summary[t.Who][t.Figure]
		if s.N == 0 {
			out = append(out, Miss{Target: t})
			continue
		}
		got := s.Median
		if t.Worst {
			got = s.Max
		}
		if t.Over != "" {
			base := summary[t.Over][t.Figure]
			if base.N == 0 || base.Median <= 0 {
				out = append(out, Miss{Target: t})
				continue
			}
			got /= base.Median
		}
		if got > t.Max {
			out = append(out, Miss{Target: t, Got: got, Measured: true})
		}
	}
	return out
}

func figureName(key string) (string, string) {
	for _, f := range figures {
		if f.key == key {
			return f.name, f.unit
		}
	}
	return key, ""
}

func unitSuffix(unit string) string {
	if unit == "" {
		return ""
	}
	return " " + unit
}

func trimFloat(v float64) string {
	s := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}

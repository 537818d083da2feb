package main

import (
	"slices"
	"strings"
	"testing"
)

// summaryOf builds a summary from medians: contestant -> figure -> median,
// with one repetition each (Min = Max = Median).
func summaryOf(medians map[string]map[string]float64) map[string]map[string]Spread {
	out := map[string]map[string]Spread{}
	for who, figs := range medians {
		out[who] = map[string]Spread{}
		for k, v := range figs {
			out[who][k] = Spread{Median: v, Min: v, Max: v, N: 1}
		}
	}
	return out
}

// meeting10x are figures that meet every 10x target.
func meeting10x() map[string]map[string]float64 {
	return map[string]map[string]float64{
		contestantController: {"burst": 1200, "latency_p50": 20, "latency_p99": 60, "rss": 70, "peak_rss": 78,
			"ready": 2.5, "first_after_ready": 0.4, "list_per_change": 0},
		contestantFloor: {"burst": 1000, "latency_p99": 50},
		contestantKeys:  {"burst": 1300, "latency_p50": 21, "latency_p99": 65, "rss": 75, "peak_rss": 80},
	}
}

func missedFigures(m []Miss) []string {
	var out []string
	for _, x := range m {
		out = append(out, x.Target.Who+" "+x.Target.Figure)
	}
	return out
}

func TestTenXFiguresThatMeetEveryTargetMissNone(t *testing.T) {
	if m := Misses(targetPresets("10x"), summaryOf(meeting10x())); len(m) != 0 {
		t.Errorf("missed %v", m)
	}
}

func TestEachTenXTargetIsCheckedAndNamedWhenMissed(t *testing.T) {
	for _, tc := range []struct {
		who, figure string
		value       float64
		want        string // in the miss's text
	}{
		{contestantController, "burst", 1310, "controller's burst <= 1.30x floor's: got 1.31x"},
		{contestantController, "latency_p99", 76, "controller's latency p99 <= 1.50x floor's: got 1.52x"},
		{contestantController, "peak_rss", 81, "controller's peak RSS (VmHWM) <= 80 MiB: got 81 MiB"},
		{contestantController, "ready", 3.2, "controller's ready after start <= 3 s: got 3.2 s"},
		{contestantController, "first_after_ready", 1.1, "controller's first reload after ready <= 1 s: got 1.1 s"},
		{contestantController, "list_per_change", 0.01, "every controller repetition's LIST per change (audit) <= 0: got 0.01"},
		{contestantKeys, "burst", 1330, "keys-only's burst <= 1.10x controller's: got 1.11x"},
		{contestantKeys, "latency_p50", 22.1, "keys-only's latency p50 <= 1.10x controller's"},
		{contestantKeys, "latency_p99", 66.1, "keys-only's latency p99"},
		{contestantKeys, "rss", 77.1, "keys-only's RSS at scale, idle"},
		{contestantKeys, "peak_rss", 85.9, "keys-only's peak RSS (VmHWM) <= 1.10x controller's: got 1.10x"},
	} {
		figs := meeting10x()
		figs[tc.who][tc.figure] = tc.value
		m := Misses(targetPresets("10x"), summaryOf(figs))
		if got := missedFigures(m); !slices.Equal(got, []string{tc.who + " " + tc.figure}) {
			t.Errorf("%s %s = %v: missed %v, want only that one", tc.who, tc.figure, tc.value, got)
			continue
		}
		if !strings.Contains(m[0].String(), tc.want) {
			t.Errorf("%s %s: miss reads %q, want it to contain %q", tc.who, tc.figure, m[0], tc.want)
		}
	}
}

func TestFullProfileJudgesBurstAndP99AgainstTheFloorAndTheKeysOnlyRun(t *testing.T) {
	figs := map[string]map[string]float64{
		contestantController: {"burst": 1400, "latency_p50": 20, "latency_p99": 170, "rss": 60, "peak_rss": 70,
			"ready": 9, "first_after_ready": 5, "list_per_change": 3},
		contestantFloor: {"burst": 1000, "latency_p99": 100},
		contestantKeys:  {"burst": 1400, "latency_p50": 20, "latency_p99": 170, "rss": 60, "peak_rss": 70},
	}
	got := missedFigures(Misses(targetPresets("full"), summaryOf(figs)))
	// Readiness, memory and LIST are 10x targets only.
	if want := []string{"controller burst", "controller latency_p99"}; !slices.Equal(got, want) {
		t.Errorf("missed %v, want %v", got, want)
	}
}

func TestAFigureNotMeasuredIsAMissNotAPass(t *testing.T) {
	figs := meeting10x()
	delete(figs[contestantController], "ready")
	delete(figs[contestantController], "first_after_ready")
	m := Misses(targetPresets("10x"), summaryOf(figs))
	if got := missedFigures(m); !slices.Equal(got, []string{"controller ready", "controller first_after_ready"}) {
		t.Fatalf("missed %v", got)
	}
	if !strings.HasSuffix(m[0].String(), "not measured") {
		t.Errorf("miss reads %q", m[0])
	}
}

func TestTargetsOfContestantsThatDidNotRunAreNeitherPrintedNorJudged(t *testing.T) {
	figs := meeting10x()
	delete(figs, contestantFloor)
	delete(figs, contestantKeys)
	figs[contestantController]["latency_p99"] = 1e6
	s := summaryOf(figs)
	for _, x := range Applicable(targetPresets("10x"), s) {
		if x.Over != "" || x.Who != contestantController {
			t.Errorf("%v applies without its contestants", x)
		}
	}
	if m := Misses(targetPresets("10x"), s); len(m) != 0 {
		t.Errorf("missed %v", m)
	}
}

func TestLISTIsJudgedOnTheWorstRepetition(t *testing.T) {
	s := summaryOf(meeting10x())
	s[contestantController]["list_per_change"] = Spread{Median: 0, Min: 0, Max: 0.02, N: 3}
	if got := missedFigures(Misses(targetPresets("10x"), s)); !slices.Equal(got, []string{"controller list_per_change"}) {
		t.Errorf("missed %v", got)
	}
}

func TestQuickScalesHaveNoTargets(t *testing.T) {
	for _, scale := range []string{"small", "tiny"} {
		if c, err := Preset(scale); err != nil || len(c.Targets) != 0 {
			t.Errorf("%s: targets %v, %v", scale, c.Targets, err)
		}
	}
}

// A run with a declared share of workloads (-declared-share) is held to the
// controller's own run: its latency p99 and idle RSS within 10%, each named
// when missed; without the declared run nothing of it is judged.
func TestTheDeclaredShareIsHeldToTheControllersP99AndRSS(t *testing.T) {
	for _, scale := range []string{"full", "10x"} {
		for _, tc := range []struct {
			figure string
			value  float64
			want   string
		}{
			{"latency_p99", 66.1, "declared's latency p99 <= 1.10x controller's: got 1.10x"},
			{"rss", 77.1, "declared's RSS at scale, idle <= 1.10x controller's: got 1.10x"},
		} {
			figs := meeting10x()
			figs[contestantDeclared] = map[string]float64{"latency_p99": 60, "rss": 70}
			if m := Misses(targetPresets(scale), summaryOf(figs)); slices.Contains(missedFigures(m), contestantDeclared+" "+tc.figure) {
				t.Fatalf("%s: figures equal to the controller's miss %v", scale, m)
			}
			figs[contestantDeclared][tc.figure] = tc.value
			var found bool
			for _, m := range Misses(targetPresets(scale), summaryOf(figs)) {
				if m.Target.Who == contestantDeclared {
					found = true
					if m.Target.Figure != tc.figure || !strings.Contains(m.String(), tc.want) {
						t.Errorf("%s: %s %v: miss reads %q, want %q", scale, tc.figure, tc.value, m, tc.want)
					}
				}
			}
			if !found {
				t.Errorf("%s: declared %s %v over the controller's is not a miss", scale, tc.figure, tc.value)
			}
		}
	}
	for _, x := range Applicable(targetPresets("full"), summaryOf(meeting10x())) {
		if x.Who == contestantDeclared {
			t.Errorf("%v applies without a declared run", x)
		}
	}
}

// Of the workloads the scenarios change, the declared share is of the
// declared kind, spread over the indices so every burst has its share.
func TestTheDeclaredShareIsSpreadEvenly(t *testing.T) {
	var declared []int
	for i := range 200 {
		if isDeclared(0.1, i) {
			declared = append(declared, i)
		}
	}
	if len(declared) != 20 || declared[0] != 9 || declared[19] != 199 {
		t.Errorf("declared workloads %v, want 20: every tenth", declared)
	}
	if n := declaredCount(0.1, 200); n != 20 {
		t.Errorf("declaredCount(0.1, 200) = %d, want 20", n)
	}
}

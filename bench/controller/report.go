package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// Report is the driver's output; durations are in the unit their name says.
type Report struct {
	Config Config     `json:"config"`
	Setup  SetupStats `json:"setup"`
	// Runs are every repetition of every contestant (controller, floor,
	// peer), in the order each ran.
	Runs map[string][]*RunResult `json:"runs"`
	// Summary is, per contestant and figure, the median and spread over the
	// repetitions.
	Summary map[string]map[string]Spread `json:"summary"`
	// Controller and Floor are the repetitions closest to the median
	// latency p99 (kept for the per-request tables).
	Controller *RunResult `json:"-"`
	Floor      *RunResult `json:"-"`
	// Ratios are controller median over floor median.
	Ratios map[string]float64 `json:"ratios_controller_over_floor,omitempty"`
	// RatiosPeer are controller median over peer median.
	RatiosPeer map[string]float64 `json:"ratios_controller_over_peer,omitempty"`
	// RatiosKeys are the median of the run with --reload-on-used-keys-only
	// over the controller's without it.
	RatiosKeys map[string]float64 `json:"ratios_keys_only_over_controller,omitempty"`
	// RatiosDeclared are the median of the run with a declared share of
	// workloads over the controller's without it.
	RatiosDeclared map[string]float64 `json:"ratios_declared_over_controller,omitempty"`
	// Missed are the targets (Config.Targets) the figures miss.
	Missed []Miss `json:"missed_targets"`
	// LoadAvg is /proc/loadavg at the start and the end: timings on a shared
	// machine are only comparable at similar load.
	LoadAvg [2]string `json:"loadavg"`
}

type SetupStats struct {
	Objects int     `json:"objects"`
	DataMiB float64 `json:"data_mib"`
	Seconds float64 `json:"seconds"`
}

type RunResult struct {
	Command  []string                `json:"command"`
	Scale    *ScaleStats             `json:"scale,omitempty"`
	Latency  LatencyStats            `json:"latency"`
	Burst    BurstStats              `json:"burst"`
	Requests map[string]RequestStats `json:"requests_per_change"`
}

type LatencyStats struct {
	Count  int     `json:"count"`
	Missed int     `json:"missed"`
	P50    float64 `json:"p50_ms"`
	P90    float64 `json:"p90_ms"`
	P99    float64 `json:"p99_ms"`
	Max    float64 `json:"max_ms"`
}

type BurstStats struct {
	Size           int     `json:"size"`
	Missed         int     `json:"missed"`
	Seconds        float64 `json:"seconds"`
	UpdatesSeconds float64 `json:"updates_issued_seconds"`
	// CPU is what the processes used from the first update until every
	// reload was seen, in steps of 10 ms (/proc's clock ticks).
	CPU BurstCPU `json:"cpu"`
}

// BurstCPU is the CPU used over a burst.
type BurstCPU struct {
	// ControlPlaneSeconds: etcd and kube-apiserver, which also serve the
	// driver's updates and the background churn.
	ControlPlaneSeconds float64 `json:"control_plane_seconds"`
	// ControllerSeconds: the controller's process; nil for the floor.
	ControllerSeconds *float64 `json:"controller_seconds,omitempty"`
}

type ScaleStats struct {
	FirstReloadSeconds float64 `json:"first_reload_seconds"`
	ReadySeconds       float64 `json:"ready_seconds,omitempty"`
	SecretUpdates      int     `json:"secret_updates"`
	RSSMiB             float64 `json:"rss_mib"`
	PeakRSSMiB         float64 `json:"peak_rss_mib"`
	RSSAnonMiB         float64 `json:"rss_anon_mib"`
	RSSFileMiB         float64 `json:"rss_file_mib"`
	// GoMemMiB are the controller's go_memstats_* gauges at the RSS sample,
	// when it exports them: how much of the RSS is live heap.
	GoMemMiB map[string]float64 `json:"go_memstats_mib,omitempty"`
}

// RequestStats are requests per change, keyed "VERB resource".
type RequestStats struct {
	Changes int `json:"changes"`
	// Audit: the controller identity's own requests, from the audit log.
	Audit counts `json:"audit"`
	// Residual: apiserver_request_total deltas minus the driver's own
	// requests, i.e. the controller plus the apiserver's own loopback traffic.
	Residual counts `json:"apiserver_metrics_residual"`
	// Driver: the driver's own requests, as subtracted.
	Driver counts `json:"driver"`
}

// Spread is one figure over the repetitions.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

func (s Spread) String() string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f [%.1f-%.1f]", s.Median, s.Min, s.Max)
}

// figures are the summarized figures, in table order, with their unit.
var figures = []struct {
	key, name, unit string
	of              func(*RunResult) (float64, bool)
}{
	{"latency_p50", "latency p50", "ms", func(r *RunResult) (float64, bool) { return r.Latency.P50, true }},
	{"latency_p90", "latency p90", "ms", func(r *RunResult) (float64, bool) { return r.Latency.P90, true }},
	{"latency_p99", "latency p99", "ms", func(r *RunResult) (float64, bool) { return r.Latency.P99, true }},
	{"latency_max", "latency max", "ms", func(r *RunResult) (float64, bool) { return r.Latency.Max, true }},
	{"burst", "burst", "ms", func(r *RunResult) (float64, bool) { return r.Burst.Seconds * 1000, true }},
	// A burst with a reload missed was measured until the wait gave up:
	// its CPU is not the burst's.
	{"burst_cpu_cp", "control plane CPU in burst", "ms", func(r *RunResult) (float64, bool) {
		return r.Burst.CPU.ControlPlaneSeconds * 1000, r.Burst.Missed == 0
	}},
	{"burst_cpu_ctl", "controller CPU in burst", "ms", func(r *RunResult) (float64, bool) {
		if r.Burst.CPU.ControllerSeconds == nil || r.Burst.Missed > 0 {
			return 0, false
		}
		return *r.Burst.CPU.ControllerSeconds * 1000, true
	}},
	{"rss", "RSS at scale, idle", "MiB", func(r *RunResult) (float64, bool) {
		return scaleFig(r, func(s *ScaleStats) float64 { return s.RSSMiB })
	}},
	{"peak_rss", "peak RSS (VmHWM)", "MiB", func(r *RunResult) (float64, bool) {
		return scaleFig(r, func(s *ScaleStats) float64 { return s.PeakRSSMiB })
	}},
	{"first_reload", "first reload via Secret", "s", func(r *RunResult) (float64, bool) {
		return scaleFig(r, func(s *ScaleStats) float64 { return s.FirstReloadSeconds })
	}},
	{"ready", "ready after start", "s", func(r *RunResult) (float64, bool) {
		return scaleFig(r, func(s *ScaleStats) float64 { return s.ReadySeconds })
	}},
	// A controller that reports no readiness has no such figure.
	{"first_after_ready", "first reload after ready", "s", func(r *RunResult) (float64, bool) {
		if r.Scale == nil || r.Scale.ReadySeconds <= 0 {
			return 0, false
		}
		return r.Scale.FirstReloadSeconds - r.Scale.ReadySeconds, true
	}},
	{"list_per_change", "LIST per change (audit)", "", func(r *RunResult) (float64, bool) {
		return r.Requests["latency"].Audit.verb("LIST") + r.Requests["burst"].Audit.verb("LIST"), true
	}},
}

func scaleFig(r *RunResult, f func(*ScaleStats) float64) (float64, bool) {
	if r.Scale == nil {
		return 0, false
	}
	return f(r.Scale), true
}

func spread(vals []float64) Spread {
	if len(vals) == 0 {
		return Spread{}
	}
	s := slices.Clone(vals)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Median: m, Min: s[0], Max: s[len(s)-1], N: len(s)}
}

// summarize fills Summary, the ratios of medians, and Controller/Floor.
func (r *Report) summarize() {
	r.Summary = map[string]map[string]Spread{}
	for who, runs := range r.Runs {
		r.Summary[who] = map[string]Spread{}
		for _, f := range figures {
			var vals []float64
			for _, run := range runs {
				if v, ok := f.of(run); ok {
					vals = append(vals, v)
				}
			}
			r.Summary[who][f.key] = spread(vals)
		}
	}
	r.Controller = medianRun(r.Runs[contestantController])
	r.Floor = medianRun(r.Runs[contestantFloor])
	r.Ratios = r.ratios(contestantController, contestantFloor)
	r.RatiosPeer = r.ratios(contestantController, contestantPeer)
	r.RatiosKeys = r.ratios(contestantKeys, contestantController)
	r.RatiosDeclared = r.ratios(contestantDeclared, contestantController)
	r.Missed = Misses(r.Config.Targets, r.Summary)
}

// medianRun is the repetition whose latency p99 is the median one.
func medianRun(runs []*RunResult) *RunResult {
	if len(runs) == 0 {
		return nil
	}
	s := slices.Clone(runs)
	slices.SortFunc(s, func(a, b *RunResult) int { return cmpFloat(a.Latency.P99, b.Latency.P99) })
	return s[len(s)/2]
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ratios are who's medians over other's.
func (r *Report) ratios(who, other string) map[string]float64 {
	c, o := r.Summary[who], r.Summary[other]
	if c == nil || o == nil {
		return nil
	}
	out := map[string]float64{}
	for _, k := range []string{"latency_p50", "latency_p90", "latency_p99", "latency_max", "burst", "burst_cpu_cp", "burst_cpu_ctl", "rss", "peak_rss", "first_reload", "ready"} {
		if a, b := c[k], o[k]; a.N > 0 && b.N > 0 && a.Median > 0 && b.Median > 0 {
			out[k] = a.Median / b.Median
		}
	}
	return out
}

// TargetMisses are the configured targets the figures miss, named.
func (r *Report) TargetMisses() []string {
	var out []string
	for _, m := range r.Missed {
		out = append(out, m.String())
	}
	return out
}

// Write prints the report as a table or as JSON.
func (r *Report) Write(w io.Writer, format string) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return r.table(w)
}

// table writes the human-readable report. It stays whole because it is one
// page laid out top to bottom: configuration, then one row per measure.
func (r *Report) table(out io.Writer) error {
	c := r.Config
	fmt.Fprintf(out, "scale %s: %d workloads (+%d elsewhere); %d changes every %s; burst of %d; %d Secrets x %d KiB (%d of %d KiB) + %d ConfigMaps in %d namespaces; churn %d/s (loaded in %.0f s)\n",
		c.Scale, c.Workloads, c.ScaleWorkloads, c.Changes, c.Interval, c.Burst, c.Secrets, c.SecretBytes>>10, c.LargeSecrets, c.LargeBytes>>10,
		c.ConfigMaps, c.Namespaces, c.Churn, r.Setup.Seconds)
	fmt.Fprintf(out, "controller: %s\n", strings.Join(r.Controller.Command, " "))
	if p := r.Runs[contestantPeer]; len(p) > 0 {
		fmt.Fprintf(out, "peer: %s\n", strings.Join(p[0].Command, " "))
	}
	if len(r.Runs[contestantFloor]) > 0 {
		fmt.Fprintf(out, "floor: watches ConfigMaps in %s\n", map[string]string{floorNamespace: "the scenarios' namespace", floorCluster: "every namespace"}[c.FloorScope])
	}
	fmt.Fprintf(out, "%d repetitions each, order rotated; median [min-max]\n", c.Reps)
	fmt.Fprintf(out, "load average: %s at start, %s at end\n\n", r.LoadAvg[0], r.LoadAvg[1])
	who := []string{contestantController}
	for _, k := range []string{contestantKeys, contestantDeclared, contestantFloor, contestantPeer} {
		if len(r.Runs[k]) > 0 {
			who = append(who, k)
		}
	}
	ratios := r.ratioColumns()
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "metric\t"
	for _, k := range who {
		head += k + "\t"
	}
	for _, rc := range ratios {
		head += rc.name + "\t"
	}
	fmt.Fprintln(w, head)
	for _, f := range figures {
		name := f.name
		if f.unit != "" {
			name += " (" + f.unit + ")"
		}
		line := name + "\t"
		for _, k := range who {
			line += r.Summary[k][f.key].String() + "\t"
		}
		for _, rc := range ratios {
			line += ratioText(rc.of, f.key) + "\t"
		}
		fmt.Fprintln(w, line)
	}
	missed := 0
	for _, runs := range r.Runs {
		for _, run := range runs {
			missed += run.Latency.Missed + run.Burst.Missed
		}
	}
	if missed > 0 {
		fmt.Fprintf(w, "MISSED reloads\t%d\t\n", missed)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if t := Applicable(c.Targets, r.Summary); len(t) > 0 {
		fmt.Fprintln(out, "\ntargets (medians unless said):")
		for _, x := range t {
			fmt.Fprintln(out, "  "+x.String())
		}
		if len(r.Missed) == 0 {
			fmt.Fprintln(out, "all targets met")
		}
		for _, m := range r.Missed {
			fmt.Fprintln(out, "MISSED:", m)
		}
	}
	for _, scenario := range []string{"latency", "burst"} {
		if err := r.requestTable(out, scenario); err != nil {
			return err
		}
	}
	return nil
}

type ratioColumn struct {
	name string
	of   map[string]float64
}

// ratioColumns are the ratio columns of the contestants that ran.
func (r *Report) ratioColumns() []ratioColumn {
	var out []ratioColumn
	for _, rc := range []struct {
		who string
		ratioColumn
	}{
		{contestantFloor, ratioColumn{"ctl/floor", r.Ratios}},
		{contestantPeer, ratioColumn{"ctl/peer", r.RatiosPeer}},
		{contestantKeys, ratioColumn{"keys/ctl", r.RatiosKeys}},
		{contestantDeclared, ratioColumn{"decl/ctl", r.RatiosDeclared}},
	} {
		if len(r.Runs[rc.who]) > 0 {
			out = append(out, rc.ratioColumn)
		}
	}
	return out
}

func ratioText(m map[string]float64, k string) string {
	if x, ok := m[k]; ok {
		return fmt.Sprintf("%.2fx", x)
	}
	return "-"
}

// requestTable prints requests per change of one scenario: the audit-log
// count of each controller's identity, and the apiserver metrics residual
// for the controller under test as a cross-check.
func (r *Report) requestTable(out io.Writer, scenario string) error {
	cr := r.Controller.Requests[scenario]
	var fr RequestStats
	if r.Floor != nil {
		fr = r.Floor.Requests[scenario]
	}
	fmt.Fprintf(out, "\nrequests per change, %s scenario (%d changes); target: PATCH deployments 1, one Event write (CREATE, or PATCH when aggregated), LIST 0\n", scenario, cr.Changes)
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "request\tcontroller (audit)\tcontroller (metrics - driver)\tfloor (audit)\t")
	keys := map[string]bool{}
	for _, m := range []counts{cr.Audit, cr.Residual, fr.Audit} {
		for k := range m {
			keys[k] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		fmt.Fprintf(w, "%s\t%.2f\t%.2f\t%.2f\t\n", k, cr.Audit[k], cr.Residual[k], fr.Audit[k])
	}
	// Always shown, zero or not: a LIST per change is the classic failure.
	fmt.Fprintf(w, "LIST *\t%.2f\t%.2f\t%.2f\t\n", cr.Audit.verb("LIST"), cr.Residual.verb("LIST"), fr.Audit.verb("LIST"))
	return w.Flush()
}

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
	Config     Config             `json:"config"`
	Setup      SetupStats         `json:"setup"`
	Controller *RunResult         `json:"controller"`
	Floor      *RunResult         `json:"floor,omitempty"`
	Ratios     map[string]float64 `json:"ratios_controller_over_floor,omitempty"`
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

func ratios(c, f *RunResult) map[string]float64 {
	out := map[string]float64{}
	put := func(k string, a, b float64) {
		if b > 0 && a > 0 {
			out[k] = a / b
		}
	}
	put("latency_p50", c.Latency.P50, f.Latency.P50)
	put("latency_p90", c.Latency.P90, f.Latency.P90)
	put("latency_p99", c.Latency.P99, f.Latency.P99)
	put("latency_max", c.Latency.Max, f.Latency.Max)
	put("burst", c.Burst.Seconds, f.Burst.Seconds)
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

func (r *Report) table(out io.Writer) error {
	c, f := r.Config, r.Floor
	fmt.Fprintf(out, "scale %s: %d workloads; %d changes every %s; burst of %d; %d Secrets x %d KiB + %d ConfigMaps in %d namespaces (loaded in %.0f s)\n",
		c.Scale, c.Workloads, c.Changes, c.Interval, c.Burst, c.Secrets, c.SecretBytes>>10, c.ConfigMaps, c.Namespaces, r.Setup.Seconds)
	fmt.Fprintf(out, "controller: %s\n", strings.Join(r.Controller.Command, " "))
	fmt.Fprintf(out, "load average: %s at start, %s at end\n\n", r.LoadAvg[0], r.LoadAvg[1])
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "metric\tcontroller\tfloor\tratio\ttarget\t")
	row := func(name string, a func(*RunResult) float64, unit, ratio, target string) {
		fv, rv := "-", "-"
		if f != nil {
			fv = fmt.Sprintf("%.1f %s", a(f), unit)
			if x, ok := r.Ratios[ratio]; ok {
				rv = fmt.Sprintf("%.2fx", x)
			}
		}
		fmt.Fprintf(w, "%s\t%.1f %s\t%s\t%s\t%s\t\n", name, a(r.Controller), unit, fv, rv, target)
	}
	row("latency p50", func(x *RunResult) float64 { return x.Latency.P50 }, "ms", "latency_p50", "")
	row("latency p90", func(x *RunResult) float64 { return x.Latency.P90 }, "ms", "latency_p90", "")
	row("latency p99", func(x *RunResult) float64 { return x.Latency.P99 }, "ms", "latency_p99", "<= 15 ms")
	row("latency max", func(x *RunResult) float64 { return x.Latency.Max }, "ms", "latency_max", "")
	row(fmt.Sprintf("burst of %d", c.Burst), func(x *RunResult) float64 { return x.Burst.Seconds * 1000 }, "ms", "burst", "<= 2000 ms")
	if s := r.Controller.Scale; s != nil {
		fmt.Fprintf(w, "RSS at scale, idle\t%.1f MiB\t-\t-\t<= 42 MiB\t\n", s.RSSMiB)
		fmt.Fprintf(w, "peak RSS\t%.1f MiB\t-\t-\t\t\n", s.PeakRSSMiB)
		fmt.Fprintf(w, "  RSS anon / file\t%.1f / %.1f MiB\t\t\t\t\n", s.RSSAnonMiB, s.RSSFileMiB)
		for _, k := range []string{"heap_alloc", "heap_inuse", "heap_idle", "heap_released", "stack_inuse", "next_gc"} {
			if v, ok := s.GoMemMiB[k]; ok {
				fmt.Fprintf(w, "  go %s\t%.1f MiB\t\t\t\t\n", k, v)
			}
		}
		fmt.Fprintf(w, "ready after start\t%.2f s\t-\t-\t\t\n", s.ReadySeconds)
		fmt.Fprintf(w, "first reload via Secret\t%.2f s\t-\t-\t<= 3.4 s\t\n", s.FirstReloadSeconds)
	}
	missed := r.Controller.Latency.Missed + r.Controller.Burst.Missed
	if f != nil {
		missed += f.Latency.Missed + f.Burst.Missed
	}
	if missed > 0 {
		fmt.Fprintf(w, "MISSED reloads\t%d\t\t\t0\t\n", missed)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, scenario := range []string{"latency", "burst"} {
		if err := r.requestTable(out, scenario); err != nil {
			return err
		}
	}
	return nil
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

package main

import (
	"bytes"
	"context"
	"flag"
	"testing"
	"time"
)

var benchScale = flag.String("controller.scale", "full", "scale of BenchmarkControllerScenarios: full, small or tiny")

// TestDriverTiny runs every scenario at the smallest scale against our
// controller and the floor, proving the driver measures what it claims:
// every change seen, and the controller's own PATCHes found in the audit log.
func TestDriverTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane and the controller")
	}
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Settle = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var log bytes.Buffer
	rep, err := Run(ctx, cfg, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for name, r := range map[string]*RunResult{"controller": rep.Controller, "floor": rep.Floor} {
		if r.Latency.Count != cfg.Changes || r.Latency.Missed != 0 || r.Burst.Missed != 0 {
			t.Errorf("%s: latency %+v burst %+v: want every change seen", name, r.Latency, r.Burst)
		}
		if got := r.Requests["latency"].Audit["PATCH deployments"]; got < 1 {
			t.Errorf("%s: %.2f PATCH deployments per change in the audit log, want >= 1", name, got)
		}
	}
	if s := rep.Controller.Scale; s == nil || s.RSSMiB <= 0 || s.FirstReloadSeconds <= 0 {
		t.Errorf("scale figures missing: %+v", s)
	}
	var out bytes.Buffer
	if err := rep.Write(&out, "table"); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())
}

// BenchmarkControllerScenarios is the `make bench` entry: the full profile
// unless -controller.scale says otherwise. It runs once whatever b.N is; the
// figures are reported as custom metrics.
func BenchmarkControllerScenarios(b *testing.B) {
	cfg, err := Preset(*benchScale)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
	defer cancel()
	var log bytes.Buffer
	rep, err := Run(ctx, cfg, &log)
	if err != nil {
		b.Fatalf("%v\n%s", err, log.String())
	}
	var out bytes.Buffer
	if err := rep.Write(&out, "table"); err != nil {
		b.Fatal(err)
	}
	b.Logf("\n%s", out.String())
	c := rep.Controller
	b.ReportMetric(c.Latency.P50, "p50-ms")
	b.ReportMetric(c.Latency.P99, "p99-ms")
	b.ReportMetric(c.Burst.Seconds, "burst-s")
	if c.Scale != nil {
		b.ReportMetric(c.Scale.RSSMiB, "rss-MiB")
		b.ReportMetric(c.Scale.FirstReloadSeconds, "first-reload-s")
	}
	for k, v := range rep.Ratios {
		b.ReportMetric(v, k+"-ratio")
	}
}

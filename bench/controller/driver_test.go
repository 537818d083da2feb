package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var benchScale = flag.String("controller.scale", "full", "scale of BenchmarkControllerScenarios: full, small or tiny")

// TestDriverTiny runs every scenario at the smallest scale against our
// controller, the same with --reload-on-used-keys-only, and the floor,
// proving the driver measures what it claims: every change seen (a quarter
// of them through configMapKeyRef), and the controller's own PATCHes found
// in the audit log.
func TestDriverTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane and the controller")
	}
	cfg, err := Preset("tiny")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Settle = time.Second
	cfg.Reps = 2
	cfg.KeysOnly = true
	cfg.APIServerProfile = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var log bytes.Buffer
	rep, err := Run(ctx, cfg, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for _, who := range []string{contestantController, contestantKeys, contestantFloor} {
		if n := len(rep.Runs[who]); n != cfg.Reps {
			t.Fatalf("%s ran %d times, want %d", who, n, cfg.Reps)
		}
		if s := rep.Summary[who]["latency_p99"]; s.N != cfg.Reps || s.Min > s.Median || s.Median > s.Max {
			t.Errorf("%s latency p99 summary %+v", who, s)
		}
	}
	if s := rep.Summary[contestantController]["peak_rss"]; s.N != cfg.Reps || s.Median <= 0 {
		t.Errorf("peak RSS not reported: %+v", s)
	}
	for name, r := range map[string]*RunResult{"controller": rep.Controller, "floor": rep.Floor, "keys-only": medianRun(rep.Runs[contestantKeys])} {
		if r.Latency.Count != cfg.Changes || r.Latency.Missed != 0 || r.Burst.Missed != 0 {
			t.Errorf("%s: latency %+v burst %+v: want every change seen", name, r.Latency, r.Burst)
		}
		if cpu := r.Burst.CPU; cpu.ControlPlaneSeconds <= 0 || (cpu.ControllerSeconds == nil) != (name == "floor") {
			t.Errorf("%s: CPU over the burst %+v: want the control plane's, and the controller's unless the floor", name, cpu)
		}
		if got := r.Requests["latency"].Audit["PATCH deployments"]; got < 1 {
			t.Errorf("%s: %.2f PATCH deployments per change in the audit log, want >= 1", name, got)
		}
	}
	for _, tag := range []string{"controller-r0", "controller-r1", "floor-r0", "floor-r1"} {
		if st, err := os.Stat(filepath.Join(cfg.APIServerProfile, tag+"-burst.cpu")); err != nil || st.Size() == 0 {
			t.Errorf("the apiserver's profile over the burst of %s: %v", tag, err)
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

func TestCPUTimeIsUserPlusSystemFromProcStat(t *testing.T) {
	// The command name may hold spaces and parentheses; fields count from
	// the last ')'. utime 250 and stime 50 ticks: 3 s.
	line := "4242 (kube (api) server) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 50 0 0 20 0 12 0 100 0 0"
	got, err := parseStatCPU(line)
	if err != nil || got != 3*time.Second {
		t.Errorf("parseStatCPU = %v, %v; want 3s", got, err)
	}
	for _, bad := range []string{"4242 kube-apiserver S 1", "4242 (x) S 1 2 3", "4242 (x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 many 50 0"} {
		if _, err := parseStatCPU(bad); err == nil {
			t.Errorf("parseStatCPU(%q) accepted", bad)
		}
	}
	own, err := cpuTime(os.Getpid())
	if err != nil || own < 0 {
		t.Errorf("cpuTime of this process: %v, %v", own, err)
	}
}

func TestSpreadIsMedianAndRange(t *testing.T) {
	if got := spread([]float64{9, 1, 5}); got != (Spread{Median: 5, Min: 1, Max: 9, N: 3}) {
		t.Errorf("odd: %+v", got)
	}
	if got := spread([]float64{4, 1, 2, 3}); got != (Spread{Median: 2.5, Min: 1, Max: 4, N: 4}) {
		t.Errorf("even: %+v", got)
	}
}

func TestTenXPresetIsTheIssuesProfile(t *testing.T) {
	c, err := Preset("10x")
	if err != nil {
		t.Fatal(err)
	}
	if c.Workloads+c.ScaleWorkloads != 2000 || c.Namespaces != 500 || c.Secrets+c.ConfigMaps != 20000 ||
		c.LargeSecrets != 500 || c.LargeBytes != 500<<10 || c.SecretBytes != 5<<10 || c.Churn != 200 || c.Targets == nil {
		t.Fatalf("10x preset %+v", c)
	}
	if c.Reps != 5 {
		t.Errorf("10x runs %d repetitions, want 5: its burst's spread needs them", c.Reps)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
}

func TestTheFloorWatchesOneNamespaceUnlessToldToWatchTheCluster(t *testing.T) {
	c, err := parseFlags([]string{"-scale", "10x"})
	if err != nil {
		t.Fatal(err)
	}
	if c.FloorScope != floorNamespace {
		t.Errorf("default floor scope %q, want %q", c.FloorScope, floorNamespace)
	}
	if c, err = parseFlags([]string{"-scale", "10x", "-floor-scope", "cluster"}); err != nil || c.FloorScope != floorCluster {
		t.Errorf("-floor-scope cluster: %q, %v", c.FloorScope, err)
	}
	if _, err := parseFlags([]string{"-floor-scope", "everywhere"}); err == nil {
		t.Error("-floor-scope everywhere was accepted")
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reloader-dev/reloader/test/process"
)

// Run starts a control plane, loads the data set and runs every scenario
// against the controller under test and then the floor.
func Run(ctx context.Context, cfg Config, log io.Writer) (*Report, error) {
	dir, err := os.MkdirTemp("", "reloader-bench-")
	if err != nil {
		return nil, fmt.Errorf("creating the work directory: %w", err)
	}
	defer os.RemoveAll(dir)
	load := loadAvg()

	logf(log, "starting the control plane")
	c, err := startCluster(ctx, dir, cfg.APIServerProfile != "")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := c.stop(); err != nil {
			logf(log, "%v", err)
		}
	}()

	logf(log, "loading %d Secrets of %d bytes and %d ConfigMaps in %d namespaces, %d workloads",
		cfg.Secrets, cfg.SecretBytes, cfg.ConfigMaps, cfg.Namespaces, cfg.Workloads)
	setup, err := c.populate(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("loading the data set: %w", err)
	}
	logf(log, "loaded %d objects (%.0f MiB) in %.1f s", setup.Objects, setup.DataMiB, setup.Seconds)

	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := newTracker()
	if err := t.start(tctx, c.driver); err != nil {
		return nil, err
	}
	if cfg.DeclaredShare > 0 {
		if err := t.startDeclared(tctx, c.dynamicConfig()); err != nil {
			return nil, err
		}
	}

	if cfg.Churn > 0 {
		logf(log, "background churn: %d unrelated updates a second", cfg.Churn)
		go c.churn(tctx, cfg, cfg.Churn)
	}

	rep := &Report{Config: cfg, Setup: setup, Runs: map[string][]*RunResult{}}
	contestants := []string{contestantController}
	if cfg.KeysOnly {
		contestants = append(contestants, contestantKeys)
	}
	if cfg.DeclaredShare > 0 {
		contestants = append(contestants, contestantDeclared)
	}
	if cfg.Floor {
		contestants = append(contestants, contestantFloor)
	}
	if cfg.Peer != "" {
		contestants = append(contestants, contestantPeer)
	}
	for r := range cfg.Reps {
		// Rotate: with three contestants each takes every position once in
		// three repetitions, so the warm-up of the control plane and any
		// drift of the machine's load fall on all of them alike.
		order := append(slices.Clone(contestants[r%len(contestants):]), contestants[:r%len(contestants)]...)
		for _, who := range order {
			logf(log, "repetition %d/%d: %s", r+1, cfg.Reps, who)
			tag := fmt.Sprintf("%s-r%d", who, r)
			var res *RunResult
			switch who {
			case contestantController:
				res, err = runController(ctx, c, t, cfg, contestant{cfg.Controller, cfg.ReadyURL, cfg.MetricsURL, "", false}, tag, dir, log)
			case contestantKeys:
				res, err = runController(ctx, c, t, cfg, contestant{cfg.Controller + keysOnlyFlags, cfg.ReadyURL, cfg.MetricsURL, "", false}, tag, dir, log)
			case contestantDeclared:
				res, err = runController(ctx, c, t, cfg, contestant{cfg.Controller + declaredFlag(), cfg.ReadyURL, cfg.MetricsURL, "", true}, tag, dir, log)
			case contestantPeer:
				res, err = runController(ctx, c, t, cfg, contestant{cfg.PeerCommand, cfg.PeerReadyURL, cfg.PeerMetricsURL, cfg.Peer, false}, tag, dir, log)
			case contestantFloor:
				res, err = runFloor(ctx, c, t, cfg, tag, log)
			}
			if err != nil {
				return nil, fmt.Errorf("repetition %d, %s: %w", r+1, who, err)
			}
			rep.Runs[who] = append(rep.Runs[who], res)
		}
	}
	rep.summarize()
	rep.LoadAvg = [2]string{load, loadAvg()}
	return rep, nil
}

// contestant is how to run and watch a controller process: templates of its
// command line, readiness and metrics URLs, the peer binary, and whether
// its scenarios change the declared share of workloads of the declared
// kind.
type contestant struct {
	command, readyURL, metricsURL, peer string
	declared                            bool
}

// The contestants of a run.
const (
	contestantController = "controller"
	// contestantKeys is the controller again, with --reload-on-used-keys-only.
	contestantKeys = "keys-only"
	// contestantDeclared is the controller again, with --workload-kind, the
	// declared share of its scenarios' workloads of that kind.
	contestantDeclared = "declared"
	contestantFloor    = "floor"
	contestantPeer     = "peer"
)

// loadAvg is the 1, 5 and 15 minute load averages, or "" off Linux.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// runController measures a controller process (ours, or the peer binary):
// first reload and memory at scale right after its start, then latency and
// burst.
func runController(ctx context.Context, c *cluster, t *tracker, cfg Config, proc contestant, tag, dir string, log io.Writer) (*RunResult, error) {
	kubeconfig, _, err := c.identityKubeconfig(controllerUser)
	if err != nil {
		return nil, err
	}
	ph, err := placeholders(c, kubeconfig)
	if err != nil {
		return nil, err
	}
	ph.Peer = proc.peer
	args, err := commandLine(ctx, proc.command, ph, dir)
	if err != nil {
		return nil, err
	}
	readyURL := ""
	if proc.readyURL != "" {
		if readyURL, err = render(proc.readyURL, ph); err != nil {
			return nil, fmt.Errorf("rendering -ready-url: %w", err)
		}
	}

	logf(log, "starting the controller: %v", args)
	started := time.Now()
	p, err := startController(args, dir, kubeconfig)
	if err != nil {
		return nil, err
	}
	defer func() { _ = p.Stop(10 * time.Second) }()
	e := &env{c: c, t: t, cfg: cfg, log: log, tag: tag, user: controllerUser, failed: exitedErr(p), pid: p.PID(), declared: proc.declared}

	res := &RunResult{Command: args}
	metricsURL := ""
	if proc.metricsURL != "" {
		if metricsURL, err = render(proc.metricsURL, ph); err != nil {
			return nil, fmt.Errorf("rendering -metrics-url: %w", err)
		}
	}
	if res.Scale, err = scale(ctx, e, p, started, readyURL, metricsURL, ph.PprofAddr); err != nil {
		return nil, err
	}
	if err := runScenarios(ctx, e, res); err != nil {
		return nil, err
	}
	return res, nil
}

// scale measures time to the first reload and, once the controller has been
// idle for cfg.Idle, its resident memory.
func scale(ctx context.Context, e *env, p *process.Process, started time.Time, readyURL, metricsURL, pprofAddr string) (*ScaleStats, error) {
	st, err := e.firstReload(ctx, p, started, readyURL)
	if err != nil {
		return nil, err
	}
	logf(e.log, "first reload through a Secret %.2f s after start (ready after %.2f s)", st.FirstReloadSeconds, st.ReadySeconds)
	if err := sleepUntil(ctx, time.Now().Add(e.cfg.Idle)); err != nil {
		return nil, err
	}
	mem, err := memory(p.PID())
	if err != nil {
		return nil, err
	}
	st.RSSMiB, st.PeakRSSMiB, st.RSSAnonMiB, st.RSSFileMiB = mem["VmRSS"], mem["VmHWM"], mem["RssAnon"], mem["RssFile"]
	logf(e.log, "controller RSS %.1f MiB (peak %.1f MiB) after %s idle", st.RSSMiB, st.PeakRSSMiB, e.cfg.Idle)
	if metricsURL != "" {
		// Optional: a controller without Go runtime metrics still gets its RSS.
		st.GoMemMiB = goMemstats(ctx, metricsURL)
	}
	if e.cfg.HeapProfile != "" {
		if err := saveHeapProfile(ctx, pprofAddr, e.cfg.HeapProfile); err != nil {
			return nil, err
		}
	}
	return &st, nil
}

func runFloor(ctx context.Context, c *cluster, t *tracker, cfg Config, tag string, log io.Writer) (*RunResult, error) {
	_, restCfg, err := c.identityKubeconfig(floorUser)
	if err != nil {
		return nil, err
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	logf(log, "starting the floor controller")
	fl, err := startFloor(fctx, restCfg, cfg.Workloads, cfg.FloorScope)
	if err != nil {
		return nil, err
	}
	e := &env{c: c, t: t, cfg: cfg, log: log, tag: tag, user: floorUser, failed: fl.err}
	res := &RunResult{Command: []string{"(in-process floor)"}}
	if err := runScenarios(ctx, e, res); err != nil {
		return nil, err
	}
	return res, nil
}

func runScenarios(ctx context.Context, e *env, res *RunResult) error {
	var err error
	logf(e.log, "%s: latency, %d changes every %s", e.tag, e.cfg.Changes, e.cfg.Interval)
	lat, latReq, err := e.latency(ctx)
	if err != nil {
		return fmt.Errorf("%s: latency scenario: %w", e.tag, err)
	}
	res.Latency = lat
	logf(e.log, "%s: latency p50 %.1f ms p99 %.1f ms (%d missed)", e.tag, lat.P50, lat.P99, lat.Missed)
	logf(e.log, "%s: burst of %d", e.tag, e.cfg.Burst)
	profiled := make(chan error, 1)
	if dir := e.cfg.APIServerProfile; dir != "" {
		go func() { profiled <- e.c.profileAPIServer(ctx, 3, filepath.Join(dir, e.tag+"-burst.cpu")) }()
		// The profile starts when the apiserver has the request.
		time.Sleep(100 * time.Millisecond)
	} else {
		profiled <- nil
	}
	b, burstReq, err := e.burst(ctx)
	if err != nil {
		return fmt.Errorf("%s: burst scenario: %w", e.tag, err)
	}
	if err := <-profiled; err != nil {
		return fmt.Errorf("%s: %w", e.tag, err)
	}
	res.Burst = b
	logf(e.log, "%s: burst applied in %.3f s (%d missed)", e.tag, b.Seconds, b.Missed)
	res.Requests = map[string]RequestStats{"latency": latReq, "burst": burstReq}
	return nil
}

// exitedErr reports the controller's exit as a failure of the scenario.
func exitedErr(p *process.Process) func() error {
	return func() error {
		if exited, err := p.Exited(); exited {
			return fmt.Errorf("the controller exited (%v):\n%s", err, p.Describe(40))
		}
		return nil
	}
}

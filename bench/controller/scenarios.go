package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/reloader-dev/reloader/test/process"
)

// reloadTimeout bounds the wait for any one expected reload; a controller
// that misses one is reported as such rather than hanging the run.
const reloadTimeout = 30 * time.Second

// env is what a scenario runs against.
type env struct {
	c   *cluster
	t   *tracker
	cfg Config
	log io.Writer
	// tag makes every run's ConfigMap values distinct from the previous run's.
	tag string
	// user is the identity whose requests the audit log counts.
	user string
	// failed reports a controller's failure (the process exited, the floor
	// errored) so a scenario stops waiting for reloads that cannot come.
	failed func() error
	// pid is the controller's process, whose CPU over the burst is
	// measured; 0 for the floor, which runs inside the driver.
	pid int
	// declared: this run changes the declared share of its workloads
	// through workloads of the declared kind (see workload).
	declared bool
}

// latency changes cfg.Changes ConfigMaps, one every cfg.Interval, round
// robin over the workloads, and measures from each UPDATE returning to the
// watch event showing the Deployment's new template.
func (e *env) latency(ctx context.Context) (LatencyStats, RequestStats, error) {
	w, err := e.c.openWindow(ctx, e.user)
	if err != nil {
		return LatencyStats{}, RequestStats{}, err
	}
	type pending struct {
		name string
		sent time.Time
		w    *waiter
	}
	var all []pending
	start := time.Now()
	for k := range e.cfg.Changes {
		if err := sleepUntil(ctx, start.Add(time.Duration(k)*e.cfg.Interval)); err != nil {
			return LatencyStats{}, RequestStats{}, err
		}
		name, bump := e.workload(k % e.cfg.Workloads)
		wt := e.t.expect(name)
		if err := bump(ctx, fmt.Sprintf("%s-latency-%d", e.tag, k)); err != nil {
			return LatencyStats{}, RequestStats{}, err
		}
		all = append(all, pending{name, time.Now(), wt})
	}
	var samples []time.Duration
	missed := 0
	for _, p := range all {
		at, ok := e.await(ctx, p.name, p.w, p.sent.Add(reloadTimeout))
		if !ok {
			missed++
			continue
		}
		samples = append(samples, at.Sub(p.sent))
	}
	if err := e.failure(ctx); err != nil {
		return LatencyStats{}, RequestStats{}, err
	}
	req, err := e.closeWindow(ctx, w, e.cfg.Changes)
	return latencyStats(samples, missed), req, err
}

// burst updates cfg.Burst ConfigMaps at once, each used by one Deployment,
// and measures until every Deployment shows its change.
func (e *env) burst(ctx context.Context) (BurstStats, RequestStats, error) {
	w, err := e.c.openWindow(ctx, e.user)
	if err != nil {
		return BurstStats{}, RequestStats{}, err
	}
	waiters := make([]*waiter, e.cfg.Burst)
	names := make([]string, e.cfg.Burst)
	bumps := make([]func(context.Context, string) error, e.cfg.Burst)
	for i := range waiters {
		names[i], bumps[i] = e.workload(i)
		waiters[i] = e.t.expect(names[i])
	}
	cpu, err := e.burstCPU()
	if err != nil {
		return BurstStats{}, RequestStats{}, err
	}
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	for i := range e.cfg.Burst {
		g.Go(func() error { return bumps[i](gctx, fmt.Sprintf("%s-burst", e.tag)) })
	}
	if err := g.Wait(); err != nil {
		return BurstStats{}, RequestStats{}, err
	}
	issued := time.Since(start)
	var last time.Time
	missed := 0
	for i, wt := range waiters {
		at, ok := e.await(ctx, names[i], wt, start.Add(reloadTimeout))
		if !ok {
			missed++
			continue
		}
		last = maxTime(last, at)
	}
	used, err := cpu()
	if err != nil {
		return BurstStats{}, RequestStats{}, err
	}
	if err := e.failure(ctx); err != nil {
		return BurstStats{}, RequestStats{}, err
	}
	req, err := e.closeWindow(ctx, w, e.cfg.Burst)
	st := BurstStats{Size: e.cfg.Burst, Missed: missed, UpdatesSeconds: issued.Seconds(), CPU: used}
	if missed == 0 {
		st.Seconds = last.Sub(start).Seconds()
	}
	return st, req, err
}

// burstCPU starts measuring the CPU the control plane (etcd and the
// apiserver) and the controller use; the returned func gives what they used
// since. On a small machine a burst is bound by CPU: what the controller
// uses there, and what its requests and watches cost the apiserver, the
// reloads wait for. The floor's own CPU is not told apart from the driver's,
// whose process it shares; its control-plane figure compares.
func (e *env) burstCPU() (func() (BurstCPU, error), error) {
	pids := e.c.cp.PIDs()
	cp0, err := cpuTime(pids...)
	if err != nil {
		return nil, err
	}
	var ctl0 time.Duration
	if e.pid != 0 {
		if ctl0, err = cpuTime(e.pid); err != nil {
			return nil, err
		}
	}
	return func() (BurstCPU, error) {
		cp1, err := cpuTime(pids...)
		if err != nil {
			return BurstCPU{}, err
		}
		out := BurstCPU{ControlPlaneSeconds: (cp1 - cp0).Seconds()}
		if e.pid != 0 {
			ctl1, err := cpuTime(e.pid)
			if err != nil {
				return BurstCPU{}, err
			}
			s := (ctl1 - ctl0).Seconds()
			out.ControllerSeconds = &s
		}
		return out, nil
	}, nil
}

// firstReload measures from the controller's start to its first reload
// through a Secret: the driver changes the Secret every 100 ms from the start,
// because a change made before the controller has seen the workload is, for
// any level-triggered or event-driven controller, just its initial state.
// The answer is thus at most 100 ms late. Readiness is polled alongside.
func (e *env) firstReload(ctx context.Context, p *process.Process, started time.Time, readyURL string) (ScaleStats, error) {
	wt := e.t.expect(firstName)
	readyAt := make(chan time.Time, 1)
	if readyURL != "" {
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			at, err := waitHTTP200(rctx, p, readyURL)
			if err != nil {
				at = time.Time{}
			}
			readyAt <- at
		}()
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Minute)
	for rev := 1; ; rev++ {
		if err := e.c.bumpFirstSecret(ctx, rev); err != nil {
			return ScaleStats{}, err
		}
		select {
		case at := <-wt.seen:
			st := ScaleStats{FirstReloadSeconds: at.Sub(started).Seconds(), SecretUpdates: rev}
			if readyURL != "" {
				st.ReadySeconds = readiness(readyAt, started)
			}
			return st, nil
		case <-p.Done():
			return ScaleStats{}, fmt.Errorf("the controller exited before its first reload:\n%s", p.Describe(40))
		case <-deadline:
			e.t.forget(firstName)
			return ScaleStats{}, fmt.Errorf("no reload through Secret %s within 5 minutes of the controller's start:\n%s", firstName, p.Describe(40))
		case <-ctx.Done():
			return ScaleStats{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// readiness is how long after start the controller reported ready; a
// controller that never does within 30 s of its first reload gets 0.
func readiness(readyAt <-chan time.Time, started time.Time) float64 {
	select {
	case r := <-readyAt:
		if !r.IsZero() {
			return r.Sub(started).Seconds()
		}
	case <-time.After(30 * time.Second):
	}
	return 0
}

// await waits for one waiter, giving up early when the controller failed.
func (e *env) await(ctx context.Context, name string, w *waiter, deadline time.Time) (time.Time, bool) {
	for {
		step := minTime(deadline, time.Now().Add(500*time.Millisecond))
		if at, ok := w.wait(ctx, step); ok {
			return at, true
		}
		if !time.Now().Before(deadline) || e.failed() != nil || ctx.Err() != nil {
			e.t.forget(name)
			return time.Time{}, false
		}
	}
}

func (e *env) failure(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return e.failed()
}

// closeWindow waits cfg.Settle first: Events are sent asynchronously after
// the reload, and they belong to the scenario.
func (e *env) closeWindow(ctx context.Context, w *window, changes int) (RequestStats, error) {
	if err := sleepUntil(ctx, time.Now().Add(e.cfg.Settle)); err != nil {
		return RequestStats{}, err
	}
	return w.close(ctx, changes)
}

func latencyStats(samples []time.Duration, missed int) LatencyStats {
	st := LatencyStats{Count: len(samples), Missed: missed}
	if len(samples) == 0 {
		return st
	}
	slices.Sort(samples)
	ms := func(q float64) float64 { return float64(percentile(samples, q)) / float64(time.Millisecond) }
	st.P50, st.P90, st.P99, st.Max = ms(0.50), ms(0.90), ms(0.99), ms(1)
	return st
}

// percentile is the nearest-rank percentile of sorted samples.
func percentile(sorted []time.Duration, q float64) time.Duration {
	i := int(float64(len(sorted))*q+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

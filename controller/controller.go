package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/reloader-dev/reloader/controller/budget"
	"github.com/reloader-dev/reloader/controller/cache"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/internal/busy"
	"github.com/reloader-dev/reloader/controller/metrics"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/report"
)

// Strategy is how a reload is made visible in the pod template.
type Strategy = decide.Strategy

const (
	// EnvVars sets STAKATER_<NAME>_CONFIGMAP|SECRET on the container that uses
	// the resource (the original's default).
	EnvVars = decide.EnvVars
	// Annotations sets reloader.stakater.com/last-reloaded-from on the pod
	// template.
	Annotations = decide.Annotations
)

// EnvVarName is the original's reload variable name:
// STAKATER_<NAME>_CONFIGMAP|SECRET (decide.EnvVarName).
func EnvVarName(kind refs.Kind, name string) string { return decide.EnvVarName(kind, name) }

// Controller is the reload engine: the workers and the queue they share,
// the caches they read, and the collaborators each role belongs to.
type Controller struct {
	o     Options
	cs    kubernetes.Interface
	cache *cache.Cache
	queue *workQueue
	// keys is the per-workload state kept between syncs (keystate.go).
	keys *keyStates
	// busy holds adoption writes and Events while reloads are written.
	busy   *busy.Tracker
	report *report.Reporter
	write  *writer
	// The gates: adoption pacing before a record, and before a reload the
	// decision's own holds and the rollout budget (nil without one).
	adoption *adoptionGate
	budget   *budgetGate
	gates    []gate
	ready    atomic.Bool
}

// New builds the controller over caches the caller built with
// o.CacheOptions() (cache.New) and adds its handlers to them; Start runs
// them.
func New(cs kubernetes.Interface, caches *cache.Cache, o Options) (*Controller, error) {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.Metrics == nil || o.Recorder == nil {
		return nil, errors.New("controller options: Metrics and Recorder are required")
	}
	c := &Controller{o: o, cs: cs, cache: caches, keys: &keyStates{}, busy: busy.New(busy.Options{})}
	c.queue = newWorkQueue(c.keys, o.Metrics.QueueDepth, o.Metrics.QueueAdds, o.Now)
	c.report = report.New(report.Options{Recorder: o.Recorder, Metrics: o.Metrics, Logger: o.Logger, Audit: o.Audit,
		Notify: o.Notify, Self: o.Self, Strategy: string(o.Strategy), Resources: caches, Now: o.Now})
	c.write = &writer{cs: cs, o: &c.o, busy: c.busy, report: c.report, keys: c.keys}
	c.adoption = newAdoptionGate(c.keys, c.busy, o.AdoptionRate, o.Now)
	if o.Budget.Enabled() {
		c.budget = &budgetGate{gate: budget.New(o.Budget), o: &c.o, cache: caches, report: c.report, queue: c.queue}
	}
	c.gates = []gate{decidedHold{c.report}, c.budget}
	h := &eventHandlers{o: &c.o, cache: caches, queue: c.queue, keys: c.keys, report: c.report, budget: c.budget, ready: &c.ready}
	if err := caches.AddHandlers(h.all()); err != nil {
		return nil, fmt.Errorf("adding the controller's handlers: %w", err)
	}
	return c, nil
}

// Start runs the informers and waits for their caches. It does not reload
// anything: RunWorkers does (HA standbys start caches without workers).
func (c *Controller) Start(ctx context.Context) error {
	for _, api := range c.o.optionalAPIs() {
		asked := c.o.asks(api)
		switch {
		case c.o.Unavailable[api]:
			c.report.APIUnavailable(reportAPI(api), c.o.APIPollInterval)
		case asked:
			c.report.APIAvailable(reportAPI(api), false)
		}
	}
	if err := c.cache.Start(ctx); err != nil {
		return err
	}
	c.ready.Store(true)
	c.o.Metrics.CacheSynced.Set(1)
	for api := range c.o.Unavailable {
		go func() {
			if c.cache.StartWhenServed(ctx, c.cs.Discovery(), api, c.o.APIPollInterval) == nil {
				c.report.APIAvailable(reportAPI(api), true)
			}
		}()
	}
	c.o.Logger.Info("caches synced", "scopes", c.cache.Scopes())
	return nil
}

func reportAPI(api cache.OptionalAPI) report.API {
	return report.API{Name: string(api), Flag: api.Flag(), Resources: api.ResourceNames()}
}

// Ready reports whether every cache has synced.
func (c *Controller) Ready() bool { return c.ready.Load() }

// RunWorkers processes the queue until ctx ends, then drains and returns.
func (c *Controller) RunWorkers(ctx context.Context) {
	defer utilruntime.HandleCrash()
	var wg sync.WaitGroup
	for i := 0; i < c.o.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wait.UntilWithContext(ctx, func(ctx context.Context) {
				for c.processNext(ctx) {
				}
			}, time.Second)
		}()
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
}

// processNext syncs one key and does the queue's bookkeeping: the sync
// returns what it found, the workqueue owns retries.
func (c *Controller) processNext(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	start := c.o.Now()
	if t, ok := c.keys.onTaken(key); ok {
		c.o.Metrics.QueueLatency.Observe(start.Sub(t).Seconds())
	}
	out, err := c.sync(ctx, key)
	c.keys.onSynced(key, out, err)
	switch {
	case err == nil:
		c.o.Metrics.Syncs.WithLabelValues("success").Inc()
		c.queue.Forget(key)
		if out.requeueAfter > 0 {
			// A held reload (a window, the budget, a pause): due when it
			// comes back, so it goes ahead of background work then.
			c.queue.urgentAfter(key, out.requeueAfter)
		}
		if out.recordAfter > 0 {
			c.queue.AddAfter(key, out.recordAfter) // background work
		}
		// As in the original, a reconcile is the handling of a change: syncs
		// that find the workload up to date (the echo of its own patch, a
		// status update) are not counted.
		if out.reloaded {
			c.o.Metrics.RecordReconcile(metrics.ResultSuccess, c.o.Now().Sub(start))
		}
	case apierrors.IsConflict(err):
		// A stale cache: retry once it has caught up; not an error worth a
		// log nor a failed reconcile (the original retries conflicts inside
		// one reconcile).
		c.o.Metrics.Syncs.WithLabelValues("requeue").Inc()
		c.o.Metrics.RetriesTotal.Inc()
		c.queue.lanes.Urgent(key) // a write lost to a race, not a failure: still a change
		c.queue.AddRateLimited(key)
	default:
		c.o.Metrics.Syncs.WithLabelValues("error").Inc()
		c.o.Metrics.RetriesTotal.Inc()
		c.o.Metrics.ErrorsTotal.WithLabelValues(metrics.ErrorHandler).Inc()
		c.o.Metrics.RecordReconcile(metrics.ResultError, c.o.Now().Sub(start))
		c.o.Logger.Error("sync failed; will retry", "workload", key.String(), "retries", c.queue.NumRequeues(key), "error", err)
		c.queue.AddRateLimited(key)
	}
	return true
}

// EventSink is sink with its writes held while reloads are being written
// (busy.Tracker): an Event is a write the apiserver shares with the reloads,
// and it says what already happened, so it can land a moment later. Give it
// to the Event broadcaster's StartRecordingToSink.
func (c *Controller) EventSink(ctx context.Context, sink record.EventSink) record.EventSink {
	return heldSink{ctx: ctx, sink: sink, busy: c.busy}
}

type heldSink struct {
	// ctx is the controller's: the broadcaster's sink interface has none.
	ctx  context.Context
	sink record.EventSink
	busy *busy.Tracker
}

// The wait's error is dropped on purpose: a stopping controller still sends
// the Events it holds.
func (s heldSink) Create(e *corev1.Event) (*corev1.Event, error) {
	_ = s.busy.Wait(s.ctx)
	return s.sink.Create(e)
}

func (s heldSink) Update(e *corev1.Event) (*corev1.Event, error) {
	_ = s.busy.Wait(s.ctx)
	return s.sink.Update(e)
}

func (s heldSink) Patch(old *corev1.Event, data []byte) (*corev1.Event, error) {
	_ = s.busy.Wait(s.ctx)
	return s.sink.Patch(old, data)
}

package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// tracker watches the Deployments of workloadNS and tells when one's pod
// template changed. The driver never writes a Deployment after creating it,
// so a new metadata.generation means a controller changed the spec: with
// either reload strategy (env var or pod-template annotation) that is the
// template. Recording annotations on metadata do not bump the generation and
// so are not mistaken for a reload.
type tracker struct {
	mu      sync.Mutex
	gen     map[string]int64
	waiters map[string]*waiter
}

// waiter is one expected template change of one Deployment.
type waiter struct {
	after int64          // the generation before the change
	seen  chan time.Time // receives the time of the watch event that showed it
}

func newTracker() *tracker {
	return &tracker{gen: map[string]int64{}, waiters: map[string]*waiter{}}
}

// start runs an informer on the Deployments and waits for its cache.
func (t *tracker) start(ctx context.Context, cs kubernetes.Interface) error {
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(workloadNS))
	inf := f.Apps().V1().Deployments().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { t.observe(o) },
		UpdateFunc: func(_, o any) { t.observe(o) },
	})
	if err != nil {
		return fmt.Errorf("watching Deployments: %w", err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("syncing the Deployment watch: %w", ctx.Err())
	}
	return nil
}

func (t *tracker) observe(o any) {
	now := time.Now() // first, so lock contention is not counted as latency
	if d, ok := o.(*appsv1.Deployment); ok {
		t.observeAt(now, d.Name, d.Generation)
	}
}

// observeAt records that the workload name (a Deployment, or one of the
// declared kind: their names differ) was seen at generation gen at now.
func (t *tracker) observeAt(now time.Time, name string, gen int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gen[name] = gen
	if w := t.waiters[name]; w != nil && gen > w.after {
		w.seen <- now
		delete(t.waiters, name)
	}
}

// expect registers, before the change is made, that name's template is about
// to change; registering first means a fast controller cannot be missed.
func (t *tracker) expect(name string) *waiter {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := &waiter{after: t.gen[name], seen: make(chan time.Time, 1)}
	t.waiters[name] = w
	return w
}

// forget drops a waiter that timed out, so a late reload is not attributed
// to a later expectation.
func (t *tracker) forget(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.waiters, name)
}

// wait returns when w saw its change, or false at the deadline.
func (w *waiter) wait(ctx context.Context, deadline time.Time) (time.Time, bool) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	select {
	case at := <-w.seen:
		return at, true
	case <-ctx.Done():
		return time.Time{}, false
	}
}

// Package alerts tells people about reloads: Slack, Microsoft Teams, Google
// Chat, a raw text webhook or a structured JSON webhook, configured with
// stakater/Reloader's ALERT_* variables. It also provides the --webhook-url
// mode, where a would-be reload is posted instead of applied.
//
// Alerting must never slow or stop reloading: Notify only enqueues, a full
// queue drops (and counts) the alert, and delivery with its retries happens
// on the goroutines of Run. Alerts carry names, never ConfigMap or Secret
// data, and the webhook URL, a credential, never appears in logs or errors.
package alerts

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Drop reasons, the reason label of reloader_alerts_dropped_total.
const (
	DropQueueFull = "queue_full"
	DropStopped   = "stopped"
)

// Notifier sends alerts after reloads. Create it with New, start it with Run.
type Notifier struct {
	sink    Sink
	info    string
	workers int
	s       *sender
	log     *slog.Logger
	queue   chan Event
	running atomic.Bool
	stopped atomic.Bool
	sent    *prometheus.CounterVec // result
	dropped *prometheus.CounterVec // reason
}

// New validates o and creates a Notifier; it sends nothing until Run.
func New(o Options) (*Notifier, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	s, err := newSender(o)
	if err != nil {
		return nil, err
	}
	sent, err := register(o.Registerer, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "reloader", Name: "alerts_sent_total",
		Help: "Alerts delivered (result=success) or given up after all attempts (result=failure), by sink.",
	}, []string{"sink", "result"}))
	if err != nil {
		return nil, err
	}
	dropped, err := register(o.Registerer, prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "reloader", Name: "alerts_dropped_total",
		Help: "Alerts not attempted: the queue was full (reason=queue_full) or the notifier had stopped (reason=stopped), by sink.",
	}, []string{"sink", "reason"}))
	if err != nil {
		return nil, err
	}
	labels := prometheus.Labels{"sink": string(o.Sink)}
	n := &Notifier{
		sink:    o.Sink,
		info:    o.AdditionalInfo,
		workers: o.Workers,
		s:       s,
		log:     o.Logger.With("sink", string(o.Sink)),
		queue:   make(chan Event, o.QueueSize),
		sent:    sent.MustCurryWith(labels),
		dropped: dropped.MustCurryWith(labels),
	}
	// Series exist from the start so that rate() and absent() work before
	// the first alert.
	for _, r := range []string{"success", "failure"} {
		n.sent.WithLabelValues(r)
	}
	for _, r := range []string{DropQueueFull, DropStopped} {
		n.dropped.WithLabelValues(r)
	}
	return n, nil
}

// register tolerates a second registration of the same metric (a second
// Notifier on one registry) by sharing the first one's counters.
func register(reg prometheus.Registerer, c *prometheus.CounterVec) (*prometheus.CounterVec, error) {
	if reg == nil {
		return c, nil
	}
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
				return existing, nil
			}
		}
		return nil, err
	}
	return c, nil
}

// Notify queues an alert for e and returns at once. When the queue is full,
// or Run has returned, the alert is dropped, counted and logged: a slow or
// dead receiver must not hold up reloads. Safe for concurrent use, before
// and during Run.
func (n *Notifier) Notify(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Resources = slices.Clone(e.Resources) // the caller may reuse its slice
	if n.stopped.Load() {
		n.drop(e, DropStopped)
		return
	}
	select {
	case n.queue <- e:
	default:
		n.drop(e, DropQueueFull)
	}
}

func (n *Notifier) drop(e Event, reason string) {
	n.dropped.WithLabelValues(reason).Inc()
	n.log.Warn("reload alert dropped", append(eventAttrs(e), "reason", reason)...)
}

// Run delivers queued alerts on Options.Workers goroutines until ctx ends,
// then returns; a delivery in progress is abandoned. Alerts still queued,
// and those notified afterwards, are counted as dropped. Run may be called
// once.
func (n *Notifier) Run(ctx context.Context) error {
	if !n.running.CompareAndSwap(false, true) {
		return errors.New("alerts: Run called twice")
	}
	var wg sync.WaitGroup
	for range n.workers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case e := <-n.queue:
					n.deliver(ctx, e)
				}
			}
		})
	}
	wg.Wait()
	n.stopped.Store(true)
	for {
		select {
		case e := <-n.queue:
			n.drop(e, DropStopped)
		default:
			return nil
		}
	}
}

func (n *Notifier) deliver(ctx context.Context, e Event) {
	if ctx.Err() != nil {
		n.drop(e, DropStopped)
		return
	}
	ct, b, err := body(n.sink, e, n.info)
	if err == nil {
		err = n.s.post(ctx, ct, b, eventAttrs(e)...)
	}
	switch {
	case err == nil:
		n.sent.WithLabelValues("success").Inc()
		n.log.Debug("reload alert sent", eventAttrs(e)...)
	case ctx.Err() != nil:
		// Shutdown, not a receiver failure: do not page anyone about it.
		n.drop(e, DropStopped)
	default:
		n.sent.WithLabelValues("failure").Inc()
		n.log.Error("reload alert not delivered", append(eventAttrs(e), "error", err.Error())...)
	}
}

func eventAttrs(e Event) []any {
	return []any{"kind", e.Workload.Kind, "namespace", e.Workload.Namespace, "name", e.Workload.Name}
}

// Webhook is the --webhook-url mode: instead of patching a workload the
// controller posts a Payload of kind ReloadRequested and waits for the
// answer, so that a failure is retried by its workqueue.
type Webhook struct {
	s    *sender
	info string
}

// NewWebhook validates o and creates a Webhook. It uses URL, Proxy,
// AdditionalInfo, Attempts, Backoff, Timeout, HTTPClient and Logger; Sink
// must be empty or SinkJSON, since the body is always a Payload.
func NewWebhook(o Options) (*Webhook, error) {
	if o.Sink != "" && o.Sink != SinkJSON {
		return nil, errors.New("alerts: a Webhook always sends JSON; leave Sink empty")
	}
	o.Sink = SinkJSON
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	s, err := newSender(o)
	if err != nil {
		return nil, err
	}
	return &Webhook{s: s, info: o.AdditionalInfo}, nil
}

// Send posts e, retrying as configured, and returns nil once the receiver
// answers 2xx. Its error never contains the URL; errors.As finds a
// *StatusError when the receiver answered.
func (w *Webhook) Send(ctx context.Context, e Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	p := payload(KindReloadRequested, e, w.info)
	p.Webhook = "update successful"
	ct, b, err := jsonBody(p)
	if err != nil {
		return err
	}
	return w.s.post(ctx, ct, b, eventAttrs(e)...)
}

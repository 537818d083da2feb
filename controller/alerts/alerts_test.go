package alerts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reloader-dev/reloader/test/reloadertest"
)

var reload = Event{
	Workload: Object{Kind: "Deployment", Namespace: "team-a", Name: "web"},
	Resources: []Object{
		{Kind: "ConfigMap", Namespace: "team-a", Name: "app-config"},
		{Kind: "Secret", Namespace: "team-a", Name: "db-credentials"},
	},
	Time: time.Date(2026, 5, 4, 3, 2, 1, 0, time.UTC),
}

type request struct {
	contentType string
	body        []byte
}

// receiver is a local webhook endpoint answering with statuses in turn (the
// last one repeating) and handing each request to the test.
type receiver struct {
	*httptest.Server
	hits     atomic.Int32
	requests chan request
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	t.Helper()
	if len(statuses) == 0 {
		statuses = []int{http.StatusOK}
	}
	rc := &receiver{requests: make(chan request, 100)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(rc.hits.Add(1)) - 1
		b, _ := io.ReadAll(r.Body)
		select {
		case rc.requests <- request{r.Header.Get("Content-Type"), b}:
		default:
		}
		w.WriteHeader(statuses[min(i, len(statuses)-1)])
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) next(t *testing.T) request {
	t.Helper()
	select {
	case r := <-rc.requests:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("the receiver got nothing within 5s")
		return request{}
	}
}

// hungReceiver accepts requests and never answers them.
func hungReceiver(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first, so Close does not wait
	return srv, &hits
}

// run starts n and stops it when the test ends.
func run(t *testing.T, n *Notifier) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func mustNew(t *testing.T, o Options) *Notifier {
	t.Helper()
	n, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return n
}

func counter(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue metric
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no %s%v", name, labels)
	return 0
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	reloadertest.EventuallyEvery(t, 5*time.Millisecond, 5*time.Second, func() (bool, string) { return cond(), what })
}

// syncBuffer collects log output written from the sender goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestEachSinkPostsItsFormatNamingWorkloadAndResources(t *testing.T) {
	const original = "prod-eu-1 : Reloader detected changes in *app-config* of type *ConfigMap* in namespace *team-a*, " +
		"*db-credentials* of type *Secret* in namespace *team-a*. Hence reloaded *web* of type *Deployment* in namespace *team-a*"
	text := func(t *testing.T, b []byte) string {
		var v struct{ Text string }
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("body %s: %v", b, err)
		}
		return v.Text
	}
	cases := []struct {
		sink        Sink
		contentType string
		message     func(t *testing.T, body []byte) string
	}{
		{SinkSlack, "application/json", func(t *testing.T, b []byte) string {
			// The original's shape: one "good" attachment authored by Reloader.
			var v struct {
				Attachments []struct {
					Color      string `json:"color"`
					AuthorName string `json:"author_name"`
					Text       string `json:"text"`
				} `json:"attachments"`
			}
			if err := json.Unmarshal(b, &v); err != nil || len(v.Attachments) != 1 {
				t.Fatalf("slack body %s: %v", b, err)
			}
			if a := v.Attachments[0]; a.Color != "good" || a.AuthorName != "Reloader" {
				t.Errorf("slack attachment = %+v, want color good and author Reloader", a)
			}
			return v.Attachments[0].Text
		}},
		{SinkTeams, "application/json", text},
		{SinkGChat, "application/json", text},
		{SinkRaw, "text/plain", func(_ *testing.T, b []byte) string { return string(b) }},
		{SinkJSON, "application/json", func(t *testing.T, b []byte) string {
			var p Payload
			if err := json.Unmarshal(b, &p); err != nil {
				t.Fatalf("json body %s: %v", b, err)
			}
			want := Payload{Kind: KindReloaded, Workload: reload.Workload, Resources: reload.Resources, Time: reload.Time, AdditionalInfo: "prod-eu-1"}
			if p.Kind != want.Kind || p.Workload != want.Workload || fmt.Sprint(p.Resources) != fmt.Sprint(want.Resources) ||
				!p.Time.Equal(want.Time) || p.AdditionalInfo != want.AdditionalInfo || p.Webhook != "" {
				t.Errorf("payload = %+v, want %+v", p, want)
			}
			return p.AdditionalInfo + " : " + p.Message
		}},
	}
	for _, tc := range cases {
		t.Run(string(tc.sink), func(t *testing.T) {
			rc := newReceiver(t)
			n := mustNew(t, Options{Sink: tc.sink, URL: rc.URL + "/hook", AdditionalInfo: "prod-eu-1"})
			run(t, n)
			n.Notify(reload)
			got := rc.next(t)
			if !strings.HasPrefix(got.contentType, tc.contentType) {
				t.Errorf("Content-Type = %q, want %s", got.contentType, tc.contentType)
			}
			want := original
			if tc.sink == SinkRaw || tc.sink == SinkJSON {
				want = strings.ReplaceAll(original, "*", "") // no chat markup outside chats
			}
			if msg := tc.message(t, got.body); msg != want {
				t.Errorf("message =\n%q\nwant\n%q", msg, want)
			}
		})
	}
}

func TestAFailingReceiverIsRetriedUntilItAccepts(t *testing.T) {
	rc := newReceiver(t, 500, 500, 500, 200)
	reg := prometheus.NewRegistry()
	n := mustNew(t, Options{Sink: SinkSlack, URL: rc.URL, Attempts: 4, Backoff: time.Millisecond, Registerer: reg})
	run(t, n)
	n.Notify(reload)
	eventually(t, "alert delivered", func() bool {
		return counter(t, reg, "reloader_alerts_sent_total", map[string]string{"sink": "slack", "result": "success"}) == 1
	})
	if got := rc.hits.Load(); got != 4 {
		t.Errorf("receiver got %d attempts, want 4", got)
	}
	if got := counter(t, reg, "reloader_alerts_sent_total", map[string]string{"result": "failure"}); got != 0 {
		t.Errorf("failures = %v, want 0", got)
	}
}

func TestDeliveryGivesUpAfterAttemptsAndCountsAFailure(t *testing.T) {
	rc := newReceiver(t, 503)
	reg := prometheus.NewRegistry()
	n := mustNew(t, Options{Sink: SinkTeams, URL: rc.URL, Attempts: 3, Backoff: time.Millisecond, Registerer: reg})
	run(t, n)
	n.Notify(reload)
	eventually(t, "failure counted", func() bool {
		return counter(t, reg, "reloader_alerts_sent_total", map[string]string{"sink": "teams", "result": "failure"}) == 1
	})
	if got := rc.hits.Load(); got != 3 {
		t.Errorf("receiver got %d attempts, want 3", got)
	}
}

func TestNotifyNeverWaitsForAHungReceiverAndEachAttemptTimesOut(t *testing.T) {
	srv, hits := hungReceiver(t)
	reg := prometheus.NewRegistry()
	const timeout = 100 * time.Millisecond
	n := mustNew(t, Options{Sink: SinkGChat, URL: srv.URL, Attempts: 1, Timeout: timeout, QueueSize: 2, Registerer: reg})
	run(t, n)
	start := time.Now()
	// Far more than the queue holds: the worker is stuck on the first, the
	// queue fills, and every further Notify must drop rather than wait.
	for i := range 50 {
		t0 := time.Now()
		n.Notify(reload)
		if d := time.Since(t0); d > 10*time.Millisecond {
			t.Fatalf("Notify #%d took %v with a hung receiver and a full queue", i, d)
		}
	}
	eventually(t, "the hung attempt fails", func() bool {
		return counter(t, reg, "reloader_alerts_sent_total", map[string]string{"result": "failure"}) >= 1
	})
	if elapsed := time.Since(start); elapsed < timeout || elapsed > timeout+3*time.Second {
		t.Errorf("first failure after %v, want about Timeout=%v", elapsed, timeout)
	}
	if hits.Load() < 1 {
		t.Error("the receiver was never reached")
	}
	if got := counter(t, reg, "reloader_alerts_dropped_total", map[string]string{"reason": DropQueueFull}); got < 40 {
		t.Errorf("dropped = %v, want most of the 50", got)
	}
}

func TestAFullQueueDropsAndCounts(t *testing.T) {
	reg := prometheus.NewRegistry()
	// Not running: nothing drains the queue, so exactly QueueSize fit.
	n := mustNew(t, Options{URL: "http://127.0.0.1:9/hook", QueueSize: 2, Registerer: reg})
	for range 5 {
		n.Notify(reload)
	}
	if got := counter(t, reg, "reloader_alerts_dropped_total", map[string]string{"sink": "raw", "reason": DropQueueFull}); got != 3 {
		t.Errorf("dropped = %v, want 3", got)
	}
}

func TestAlertsAfterStopAreDroppedNotQueued(t *testing.T) {
	reg := prometheus.NewRegistry()
	n := mustNew(t, Options{URL: "http://127.0.0.1:9/hook", Registerer: reg})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := n.Run(ctx); err != nil {
		t.Fatal(err)
	}
	n.Notify(reload)
	if got := counter(t, reg, "reloader_alerts_dropped_total", map[string]string{"reason": DropStopped}); got != 1 {
		t.Errorf("dropped after stop = %v, want 1", got)
	}
	if err := n.Run(context.Background()); err == nil {
		t.Error("a second Run must be refused")
	}
}

func TestMetricsExistBeforeTheFirstAlertAndSurviveASecondNotifier(t *testing.T) {
	reg := prometheus.NewRegistry()
	o := Options{Sink: SinkSlack, URL: "https://hooks.example/x", Registerer: reg}
	mustNew(t, o)
	mustNew(t, o)
	for _, c := range []struct {
		name   string
		labels map[string]string
	}{
		{"reloader_alerts_sent_total", map[string]string{"sink": "slack", "result": "success"}},
		{"reloader_alerts_sent_total", map[string]string{"sink": "slack", "result": "failure"}},
		{"reloader_alerts_dropped_total", map[string]string{"sink": "slack", "reason": DropQueueFull}},
		{"reloader_alerts_dropped_total", map[string]string{"sink": "slack", "reason": DropStopped}},
	} {
		if got := counter(t, reg, c.name, c.labels); got != 0 {
			t.Errorf("%s%v = %v, want 0", c.name, c.labels, got)
		}
	}
}

// The webhook URL is a credential: it must not reach logs, errors or the
// published options, whatever goes wrong.
func TestTheWebhookURLNeverAppearsInLogsOrErrors(t *testing.T) {
	const path, query = "/services/T0/B0/PATHSECRET", "token=QUERYSECRET"
	leaks := func(t *testing.T, where, s string) {
		t.Helper()
		for _, secret := range []string{"PATHSECRET", "QUERYSECRET"} {
			if strings.Contains(s, secret) {
				t.Errorf("%s shows the URL's %s:\n%s", where, secret, s)
			}
		}
	}

	failing := newReceiver(t, 500)
	hung, _ := hungReceiver(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	l.Close()
	redirecting := newReceiver(t, http.StatusFound)

	for name, base := range map[string]string{"500": failing.URL, "hung": hung.URL, "refused": refused, "redirect": redirecting.URL} {
		t.Run(name, func(t *testing.T) {
			var logs syncBuffer
			o := Options{
				Sink: SinkSlack, URL: base + path + "?" + query, Proxy: "",
				Attempts: 2, Backoff: time.Millisecond, Timeout: 50 * time.Millisecond, QueueSize: 1,
				Registerer: prometheus.NewRegistry(),
				Logger:     slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			}
			n := mustNew(t, o)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- n.Run(ctx) }()
			n.Notify(reload)
			n.Notify(reload)
			n.Notify(reload) // dropped: the drop is logged too
			eventually(t, "the alert fails", func() bool { return strings.Contains(logs.String(), "not delivered") })
			cancel()
			<-done
			leaks(t, "the log", logs.String())

			w, err := NewWebhook(Options{URL: o.URL, Attempts: 2, Backoff: time.Millisecond, Timeout: 50 * time.Millisecond, Logger: o.Logger})
			if err != nil {
				t.Fatal(err)
			}
			err = w.Send(context.Background(), reload)
			if err == nil {
				t.Fatal("Send succeeded against a failing receiver")
			}
			leaks(t, "the error", err.Error())
			for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
				leaks(t, "a wrapped error", e.Error())
			}
		})
	}

	t.Run("options", func(t *testing.T) {
		o := Options{Sink: SinkSlack, URL: "https://hooks.slack.com" + path + "?" + query, Proxy: "http://user:PATHSECRET@proxy:3128"}
		js, _ := json.Marshal(o)
		var logs bytes.Buffer
		slog.New(slog.NewTextHandler(&logs, nil)).Info("effective", "alerts", o)
		for where, s := range map[string]string{
			"String": o.String(), "%v": fmt.Sprintf("%v", o), "%+v": fmt.Sprintf("%+v", o), "%#v": fmt.Sprintf("%#v", o),
			"%v of a pointer": fmt.Sprintf("%v", &o), "JSON": string(js), "slog": logs.String(), "Redacted": o.Redacted().URL + o.Redacted().Proxy,
		} {
			leaks(t, where, s)
			if !strings.Contains(s, "hooks.slack.com") {
				t.Errorf("%s should still name the service: %s", where, s)
			}
		}
	})
}

func TestWebhookModePostsTheStructuredPayload(t *testing.T) {
	rc := newReceiver(t)
	w, err := NewWebhook(Options{URL: rc.URL + "/reload", AdditionalInfo: "prod-eu-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Send(context.Background(), reload); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := rc.next(t)
	if got.contentType != "application/json" {
		t.Errorf("Content-Type = %q", got.contentType)
	}
	var p Payload
	if err := json.Unmarshal(got.body, &p); err != nil {
		t.Fatalf("body %s: %v", got.body, err)
	}
	if p.Kind != KindReloadRequested || p.Workload != reload.Workload || len(p.Resources) != 2 ||
		p.Resources[0] != reload.Resources[0] || p.Resources[1] != reload.Resources[1] ||
		!p.Time.Equal(reload.Time) || p.AdditionalInfo != "prod-eu-1" {
		t.Errorf("payload = %+v", p)
	}
	// Receivers written for the original look for this field.
	if p.Webhook != "update successful" {
		t.Errorf("webhook = %q, want the original's %q", p.Webhook, "update successful")
	}
	if strings.Contains(p.Message, "Hence reloaded") {
		t.Errorf("nothing was reloaded, yet the message says so: %q", p.Message)
	}
}

func TestWebhookModeReturnsAnErrorOnNon2xx(t *testing.T) {
	rc := newReceiver(t, 500)
	w, err := NewWebhook(Options{URL: rc.URL, Attempts: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Send(context.Background(), reload)
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 500 {
		t.Fatalf("Send = %v, want a StatusError 500", err)
	}
	if got := rc.hits.Load(); got != 2 {
		t.Errorf("receiver got %d attempts, want 2", got)
	}
}

func TestAClientErrorIsNotRetried(t *testing.T) {
	rc := newReceiver(t, http.StatusNotFound) // e.g. a revoked Slack webhook
	w, _ := NewWebhook(Options{URL: rc.URL, Attempts: 5, Backoff: time.Millisecond})
	var se *StatusError
	if err := w.Send(context.Background(), reload); !errors.As(err, &se) || se.StatusCode != 404 {
		t.Fatalf("Send = %v, want a StatusError 404", err)
	}
	if got := rc.hits.Load(); got != 1 {
		t.Errorf("receiver got %d attempts, want 1", got)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	elsewhere := newReceiver(t)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	w, _ := NewWebhook(Options{URL: redirect.URL, Attempts: 1})
	if err := w.Send(context.Background(), reload); err == nil {
		t.Error("a redirect must fail the delivery")
	}
	if elsewhere.hits.Load() != 0 {
		t.Error("the alert followed the redirect to another endpoint")
	}
}

func TestRetriesStopWhenTheContextEnds(t *testing.T) {
	rc := newReceiver(t, 503)
	w, _ := NewWebhook(Options{URL: rc.URL, Attempts: 5, Backoff: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := w.Send(ctx, reload)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Send = %v, want the context's deadline", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Send took %v, ignoring its context during backoff", d)
	}
}

func TestNotifyCopiesTheResources(t *testing.T) {
	rc := newReceiver(t)
	n := mustNew(t, Options{Sink: SinkJSON, URL: rc.URL})
	res := []Object{{Kind: "ConfigMap", Namespace: "ns", Name: "before"}}
	n.Notify(Event{Workload: reload.Workload, Resources: res})
	res[0].Name = "after" // a caller reusing its slice
	run(t, n)
	var p Payload
	_ = json.Unmarshal(rc.next(t).body, &p)
	if len(p.Resources) != 1 || p.Resources[0].Name != "before" {
		t.Errorf("resources = %+v, want the ones notified", p.Resources)
	}
	if p.Time.IsZero() {
		t.Error("a zero Time must become the time of Notify")
	}
}

package apiproxy_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/reloader-dev/reloader/test/apiproxy"
)

// A request through the proxy reaches the upstream and comes back with the
// upstream's answer; the client found the proxy through the kubeconfig it
// wrote and spoke HTTP/2 to it, as client-go does to an apiserver.
func TestARequestIsForwardedOverHTTP2WithTheUpstreamsAnswer(t *testing.T) {
	up := startUpstream(t)
	p := startProxy(t, up)
	c, cfg := clientOf(t, p)
	if cfg.Host != p.URL() || string(cfg.CAData) != string(p.CAData()) {
		t.Fatalf("kubeconfig names %s with CA %q; want %s with the proxy's CA", cfg.Host, cfg.CAData, p.URL())
	}
	if cfg.BearerToken != "" || len(cfg.CertData) != 0 || cfg.Username != "" {
		t.Fatal("the kubeconfig carries credentials; the proxy brings its own")
	}
	if u, err := url.Parse(p.URL()); err != nil || u.Scheme != "https" || u.Hostname() != "127.0.0.1" {
		t.Fatalf("proxy URL %s: want https on 127.0.0.1 (%v)", p.URL(), err)
	}

	resp := get(t, c, p.URL()+"/api/v1/namespaces/ns1/configmaps/app")
	if resp.ProtoMajor != 2 {
		t.Errorf("client and proxy spoke %s; want HTTP/2", resp.Proto)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if want := `GET /api/v1/namespaces/ns1/configmaps/app auth="Bearer upstream-token"`; string(body) != want {
		t.Errorf("answer %q; want %q", body, want)
	}
	if n := p.Requests(apiproxy.Resource("configmaps")); n != 1 {
		t.Errorf("Requests(configmaps) = %d; want 1", n)
	}
}

// The proxy authenticates to the upstream as the upstream configuration
// says; whatever the client presents is dropped, so a controller behind the
// proxy has the proxy's identity, not one it brought.
func TestTheClientsCredentialsAreReplacedByTheUpstreams(t *testing.T) {
	up := startUpstream(t)
	p := startProxy(t, up)
	_, cfg := clientOf(t, p)
	cfg.BearerToken = "client-token"
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp := get(t, &http.Client{Transport: rt}, p.URL()+"/api/v1/secrets")
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(body), `auth="Bearer upstream-token"`) {
		t.Errorf("the upstream saw %q; want the upstream's token only", body)
	}
}

// A streamed body (a watch) arrives line by line while the upstream is still
// writing it, over HTTP/2 and over HTTP/1.1 alike: the proxy buffers nothing.
func TestAStreamedBodyArrivesAsItIsWritten(t *testing.T) {
	up := startUpstream(t)
	p := startProxy(t, up)
	h2, _ := clientOf(t, p)
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.CAData()) {
		t.Fatal("CAData holds no certificate")
	}
	h1 := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	t.Cleanup(h1.CloseIdleConnections)

	for _, tc := range []struct {
		client *http.Client
		major  int
	}{{h2, 2}, {h1, 1}} {
		t.Run(fmt.Sprintf("HTTP/%d", tc.major), func(t *testing.T) {
			resp := get(t, tc.client, p.URL()+"/api/v1/namespaces/ns1/configmaps?watch=true")
			if resp.ProtoMajor != tc.major {
				t.Fatalf("spoke %s; want HTTP/%d", resp.Proto, tc.major)
			}
			// The stream never ends: every line seen came while it was open.
			ls := lines(resp.Body)
			for want := 1; want <= 5; want++ {
				if got := next(t, ls, 5*time.Second); got != want {
					t.Fatalf("line %d; want %d", got, want)
				}
			}
		})
	}
}

// The proxy forwards only to a test apiserver on loopback: any other
// upstream is refused before anything is dialled.
func TestStartRefusesAnUpstreamOffLoopback(t *testing.T) {
	for _, host := range []string{"https://192.0.2.10:6443", "https://example.invalid", "10.0.0.1:443"} {
		p, err := apiproxy.Start(t.Context(), apiproxy.Options{Upstream: &rest.Config{Host: host}})
		if err == nil {
			p.Close()
			t.Errorf("Start with upstream %s succeeded; want it refused", host)
		}
	}
	if _, err := apiproxy.Start(t.Context(), apiproxy.Options{}); err == nil {
		t.Error("Start without an upstream succeeded")
	}
}

// Close ends everything: streams in flight, held or not, requests waiting on
// a hold and the connections on both sides, and it leaves no goroutine
// behind. Holds need no release afterwards (a late one is harmless).
func TestCloseEndsEverythingAndLeaksNoGoroutine(t *testing.T) {
	up := startUpstream(t)
	before := runtime.NumGoroutine()
	p, err := apiproxy.Start(t.Context(), apiproxy.Options{Upstream: up.cfg})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := clientOf(t, p)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	flowing, err := do(ctx, c, http.MethodGet, p.URL()+"/api/v1/namespaces/ns1/configmaps?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	stopped, err := do(ctx, c, http.MethodGet, p.URL()+"/api/v1/namespaces/ns1/secrets?watch=true")
	if err != nil {
		t.Fatal(err)
	}
	flowingLines, stoppedLines := lines(flowing.Body), lines(stopped.Body)
	next(t, stoppedLines, 5*time.Second)
	release := p.Hold(apiproxy.Resource("secrets"))
	waiting := send(ctx, c, http.MethodGet, p.URL()+"/api/v1/namespaces/ns1/secrets/s")
	eventually(t, 5*time.Second, "the proxy receives the held request", func() bool {
		return p.Requests(apiproxy.Resource("secrets")) == 2
	})

	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return within 5s")
	}
	if a := receive(t, waiting, 5*time.Second); a.err == nil {
		t.Errorf("the held request was answered %q after Close; want an error", a.body)
	}
	for name, ls := range map[string]<-chan int{"flowing": flowingLines, "stopped": stoppedLines} {
		drained(t, name, ls, 5*time.Second)
	}
	release()
	flowing.Body.Close()
	stopped.Body.Close()
	utilnet.CloseIdleConnectionsFor(c.Transport)

	goroutinesBackTo(t, before, 5*time.Second)
}

// drained waits up to d for a stream to end.
func drained(t *testing.T, name string, ls <-chan int, d time.Duration) {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case _, ok := <-ls:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatalf("the %s stream did not end within %v", name, d)
		}
	}
}

// goroutinesBackTo waits up to d until there are no more goroutines than
// before and none runs the proxy's code; goroutines end asynchronously after
// their connections close. It fails with every stack otherwise.
func goroutinesBackTo(t *testing.T, before int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		n := runtime.NumGoroutine()
		if n <= before && !strings.Contains(stacks, "reloader/test/apiproxy.") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines %v after Close, %d before Start:\n%s", n, d, before, stacks)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

package apiproxy_test

import (
	"bufio"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/reloader-dev/reloader/test/apiproxy"
)

// upstream stands in for the kube-apiserver: a TLS server speaking HTTP/2
// whose watch requests (?watch=true) stream numbered lines, one every few
// milliseconds, and whose other requests answer with what they were asked
// and the Authorization they came with.
type upstream struct {
	srv *httptest.Server
	cfg *rest.Config

	mu   sync.Mutex
	hits map[string]int // requests by path
	// started counts the lines every stream has begun to write: a line
	// numbered above it at some moment was written after that moment.
	started atomic.Int64
}

const upstreamToken = "upstream-token"

func startUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{hits: map[string]int{}}
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(u.serve))
	u.srv.EnableHTTP2 = true
	u.srv.StartTLS()
	t.Cleanup(u.srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: u.srv.Certificate().Raw})
	u.cfg = &rest.Config{Host: u.srv.URL, BearerToken: upstreamToken, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
	return u
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	u.hits[r.URL.Path]++
	u.mu.Unlock()
	if r.URL.Query().Get("watch") != "true" {
		fmt.Fprintf(w, "%s %s auth=%q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	tick := time.NewTicker(3 * time.Millisecond)
	defer tick.Stop()
	for i := 1; ; i++ {
		u.started.Add(1)
		fmt.Fprintf(w, "%d\n", i)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

func (u *upstream) hitsOf(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.hits[path]
}

func startProxy(t *testing.T, u *upstream) *apiproxy.Proxy {
	t.Helper()
	log := &testLog{t: t}
	t.Cleanup(log.stop) // after Close, which is registered later
	p, err := apiproxy.Start(context.Background(), apiproxy.Options{Upstream: u.cfg, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// testLog shows the proxy's error log in the test's output until the test
// ends (testing panics on a Log after that).
type testLog struct {
	t       *testing.T
	mu      sync.Mutex
	stopped bool
}

func (l *testLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped {
		l.t.Log(string(b))
	}
	return len(b), nil
}

func (l *testLog) stop() {
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
}

// clientOf builds a client of p the way a controller would: from the
// kubeconfig p writes, through client-go's transport.
func clientOf(t *testing.T, p *apiproxy.Proxy) (*http.Client, *rest.Config) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "proxy.kubeconfig")
	if err := p.WriteKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: rt}, cfg
}

// get sends a GET that lives as long as the test, and fails the test on
// any error or a status other than 200.
func get(t *testing.T, c *http.Client, url string) *http.Response {
	t.Helper()
	resp, err := do(t.Context(), c, http.MethodGet, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return resp
}

func do(ctx context.Context, c *http.Client, method, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return nil, err
	}
	return c.Do(req)
}

// answer is the outcome of a request sent in the background.
type answer struct {
	body string
	err  error
}

// send sends a request in the background; its answer comes on the channel.
func send(ctx context.Context, c *http.Client, method, url string) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		resp, err := do(ctx, c, method, url)
		if err != nil {
			ch <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s %s: %s", method, url, resp.Status)
		}
		ch <- answer{body: string(b), err: err}
	}()
	return ch
}

// receive waits up to d for an answer.
func receive(t *testing.T, ch <-chan answer, d time.Duration) answer {
	t.Helper()
	select {
	case a := <-ch:
		return a
	case <-time.After(d):
		t.Fatalf("no answer within %v", d)
		return answer{}
	}
}

// lines delivers the numbered lines of a streamed body as they come; the
// channel closes when the body ends.
func lines(body io.Reader) <-chan int {
	ch := make(chan int, 1024)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			n, err := strconv.Atoi(sc.Text())
			if err != nil {
				return
			}
			ch <- n
		}
	}()
	return ch
}

// next waits up to d for the next line.
func next(t *testing.T, ch <-chan int, d time.Duration) int {
	t.Helper()
	select {
	case n, ok := <-ch:
		if !ok {
			t.Fatal("the stream ended")
		}
		return n
	case <-time.After(d):
		t.Fatalf("no line within %v", d)
		return 0
	}
}

// eventually polls cond every few milliseconds for up to d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

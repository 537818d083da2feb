// Package apiproxy is a fault-injecting reverse proxy in front of a test
// kube-apiserver. It gives one client (a controller process started with the
// proxy's kubeconfig) a stale view of the cluster on purpose and on cue,
// while every other client sees the apiserver directly: a frozen leader that
// thaws with a lagging watch, an upgrade's old pod still acting on what it
// saw before, a network partition that heals. Hold stops the traffic a
// Matcher selects (new requests wait, running watch streams stop delivering)
// and its release lets everything through in order, so the test decides
// exactly what the client has seen when it acts, instead of hoping a race
// goes the wrong way.
//
// The proxy listens on 127.0.0.1 only, with a certificate of its own, and
// forwards only to the upstream it is given, with the upstream's
// credentials; it refuses an upstream that is not on loopback.
package apiproxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options configures a proxy.
type Options struct {
	// Upstream is the apiserver every request goes to, and the identity the
	// proxy uses there; what the client authenticates with is dropped.
	Upstream *rest.Config
	// Log receives the proxy's error log (failed upstream requests, TLS
	// handshakes); nil discards it.
	Log io.Writer
}

// Proxy is a running proxy. Its methods may be called concurrently.
type Proxy struct {
	url      string
	caPEM    []byte
	srv      *http.Server
	conns    conns // to the upstream
	gate     gate
	cancel   context.CancelFunc // ends every request in flight
	served   chan struct{}      // closed when Serve has returned
	mu       sync.Mutex
	closed   bool
	running  sync.WaitGroup // handlers in flight; Add only under mu, before closed
	closing  sync.Once
	closeErr error
}

// inboundKey carries the request as the client sent it into ModifyResponse,
// which otherwise sees only the request rewritten for the upstream.
type inboundKey struct{}

// Start serves the proxy on 127.0.0.1 over TLS, HTTP/2 and HTTP/1.1. ctx
// bounds starting only; the proxy runs until Close.
func Start(ctx context.Context, opts Options) (*Proxy, error) {
	if opts.Upstream == nil {
		return nil, errors.New("starting the API proxy: no upstream")
	}
	p := &Proxy{served: make(chan struct{})}
	target, rt, err := upstream(opts.Upstream, p.conns.dial)
	if err != nil {
		return nil, err
	}
	cert, caPEM, err := servingCert()
	if err != nil {
		return nil, err
	}
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the API proxy: %w", err)
	}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	errLog := log.New(logw, "apiproxy ", log.LstdFlags)

	// Close cancels every request through this context, which also cancels
	// the request to the upstream and wakes what a hold blocks.
	base, cancel := context.WithCancel(context.Background())
	p.url, p.caPEM, p.cancel = "https://"+l.Addr().String(), caPEM, cancel
	rp := p.forwarder(target, rt, errLog)
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	protocols.SetHTTP2(true)
	p.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { p.serve(w, r, rp) }),
		// No ReadTimeout or WriteTimeout: a watch stays open for minutes.
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		Protocols:         &protocols,
		ErrorLog:          errLog,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	go func() {
		defer close(p.served)
		_ = p.srv.ServeTLS(l, "", "")
	}()
	return p, nil
}

// upstream is where requests go (the upstream's scheme, host and path
// prefix, which must be on loopback) and the transport that takes them
// there with the upstream's credentials, over connections from dial.
func upstream(cfg *rest.Config, dial func(context.Context, string, string) (net.Conn, error)) (*url.URL, http.RoundTripper, error) {
	target, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the upstream address %q: %w", cfg.Host, err)
	}
	host := target.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, nil, fmt.Errorf("upstream %s is not on loopback: the API proxy forwards only to a local test apiserver", target)
	}
	// A Proxy func makes client-go build a transport of our own rather than
	// keep it in its cache for the life of the process; returning no proxy
	// keeps $HTTPS_PROXY out of the way.
	cfg = rest.CopyConfig(cfg)
	cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	cfg.Dial = dial
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("building the transport to the upstream %s: %w", target, err)
	}
	return target, rt, nil
}

// forwarder is the reverse proxy to target, through the hold on bodies.
func (p *Proxy) forwarder(target *url.URL, rt http.RoundTripper, errLog *log.Logger) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			// client-go's bearer-token round tripper keeps an Authorization
			// header it finds, so the client's would win over the upstream's.
			pr.Out.Header.Del("Authorization")
		},
		Transport: rt,
		// Every write is flushed: a watch event reaches the client when the
		// upstream sends it, not when a buffer fills.
		FlushInterval:  -1,
		ModifyResponse: p.holdBody,
		ErrorLog:       errLog,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			// A client that went away, or Close, is no upstream failure.
			if r.Context().Err() == nil {
				errLog.Printf("forwarding %s %s: %v", r.Method, r.URL.Path, err)
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
}

// serve records r, waits while a hold matches it, and forwards it.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, rp *httputil.ReverseProxy) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		http.Error(w, "apiproxy: closed", http.StatusServiceUnavailable)
		return
	}
	p.running.Add(1)
	p.mu.Unlock()
	defer p.running.Done()

	p.gate.record(r)
	if err := p.gate.wait(r.Context(), r); err != nil {
		// The client went away or the proxy is closing; either way the
		// request was never forwarded.
		http.Error(w, "apiproxy: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), inboundKey{}, r)))
}

// holdBody wraps every response body, not only those a hold matches now: a
// watch that started before a hold must stop when it begins.
func (p *Proxy) holdBody(resp *http.Response) error {
	ctx := resp.Request.Context()
	in, ok := ctx.Value(inboundKey{}).(*http.Request)
	if !ok {
		return errors.New("apiproxy: a response without its inbound request")
	}
	resp.Body = &heldBody{ReadCloser: resp.Body, ctx: ctx, req: in, gate: &p.gate}
	return nil
}

// URL is the proxy's address, https://127.0.0.1:<port>.
func (p *Proxy) URL() string { return p.url }

// CAData is the PEM of the proxy's self-signed certificate, the only one a
// client needs to trust to reach it.
func (p *Proxy) CAData() []byte { return p.caPEM }

// WriteKubeconfig writes a kubeconfig file for a client of the proxy: its
// URL and certificate, and no credentials (the proxy brings its own).
func (p *Proxy) WriteKubeconfig(path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["apiproxy"] = &clientcmdapi.Cluster{Server: p.url, CertificateAuthorityData: p.caPEM}
	kc.AuthInfos["apiproxy"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["apiproxy"] = &clientcmdapi.Context{Cluster: "apiproxy", AuthInfo: "apiproxy", Namespace: "default"}
	kc.CurrentContext = "apiproxy"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing the API proxy's kubeconfig %s: %w", path, err)
	}
	return nil
}

// Close stops the proxy: it stops listening, ends every request in flight
// (held ones included), waits for their handlers to return and closes the
// connections on both sides. Holds need no release afterwards. Close may be
// called more than once.
func (p *Proxy) Close() error {
	p.closing.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		p.cancel()
		if err := p.srv.Close(); err != nil {
			p.closeErr = fmt.Errorf("closing the API proxy: %w", err)
		}
		p.running.Wait()
		<-p.served
		p.conns.closeAll()
	})
	return p.closeErr
}

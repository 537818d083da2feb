// Package registry runs real OCI registries on loopback for tests:
//
//   - go-containerregistry's registry in-process, which implements the OCI
//     referrers API (the path Harbor 2.8+ and Artifactory 7.90+ take);
//   - the CNCF distribution v3 registry as a process, which has no referrers
//     API (the cosign tag and referrers tag-fallback path Nexus and older
//     registries take).
package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"

	"github.com/reloader-dev/reloader/test/process"
	"github.com/reloader-dev/reloader/test/tools"
)

// Registry is a running registry reachable over plain HTTP on 127.0.0.1.
type Registry struct {
	// Host is "127.0.0.1:<port>", the registry part of a reference.
	Host string
	// Referrers tells whether the registry serves the OCI referrers API.
	Referrers bool
	stop      func() error
	proc      *process.Process
}

// Stop ends the registry.
func (r *Registry) Stop() error { return r.stop() }

// Logs returns the tail of the registry's log (distribution only).
func (r *Registry) Logs(n int) string {
	if r.proc == nil {
		return ""
	}
	return r.proc.Describe(n)
}

// InProcessOptions configures StartInProcess.
type InProcessOptions struct {
	// Handler wraps the registry, for fault injection in tests.
	Wrap func(http.Handler) http.Handler
	// Log receives the registry's request log; nil discards it.
	Log io.Writer
}

// StartInProcess serves go-containerregistry's registry, referrers API on.
func StartInProcess(opts InProcessOptions) (*Registry, error) {
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	var h http.Handler = ggcrregistry.New(
		ggcrregistry.WithReferrersSupport(true),
		ggcrregistry.Logger(log.New(logw, "registry ", log.LstdFlags)),
	)
	if opts.Wrap != nil {
		h = opts.Wrap(h)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the in-process registry: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return &Registry{
		Host:      l.Addr().String(),
		Referrers: true,
		stop: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return srv.Shutdown(ctx)
		},
	}, nil
}

// InProcess starts go-containerregistry's registry for the test and stops
// it when the test ends; a registry that cannot start fails the test.
func InProcess(t testing.TB) *Registry {
	t.Helper()
	r, err := StartInProcess(InProcessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	return r
}

// StartDistribution runs the CNCF distribution v3 registry with filesystem
// storage under dir and no authentication, built once per machine by
// hack/tools/ensure.sh.
func StartDistribution(ctx context.Context, dir string) (*Registry, error) {
	return StartDistributionWith(ctx, dir, DistributionOptions{})
}

// DistributionOptions configures StartDistributionWith. At most one of
// Token and Htpasswd is set.
type DistributionOptions struct {
	// Token makes the registry accept only bearer tokens of this issuer
	// (`auth: token`), scoped per repository as Harbor's are.
	Token *TokenIssuer
	// Htpasswd makes the registry require basic auth (`auth: htpasswd`) of
	// these users, password by user name, as Artifactory and Nexus do.
	Htpasswd map[string]string
}

// StartDistributionWith runs the CNCF distribution v3 registry with
// filesystem storage under dir and the authentication opts asks for.
func StartDistributionWith(ctx context.Context, dir string, opts DistributionOptions) (*Registry, error) {
	if opts.Token != nil && opts.Htpasswd != nil {
		return nil, errors.New("starting the distribution registry: token and htpasswd auth are exclusive")
	}
	bin, err := tools.Binary(ctx, tools.Registry, "registry")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the registry directory: %w", err)
	}
	// With token auth a front end on its own port serves the token service
	// and passes everything else to the registry, as Harbor's proxy does;
	// the realm must name it before the registry starts.
	var front net.Listener
	realm := ""
	if opts.Token != nil {
		if front, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("listening for the registry's front end: %w", err)
		}
		realm = "http://" + front.Addr().String() + TokenPath
	}
	authCfg, err := authConfig(dir, opts, realm)
	if err != nil {
		if front != nil {
			front.Close()
		}
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := process.FreePort()
		if err != nil {
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		cfg := distributionConfig(dir, addr, authCfg)
		cfgPath := filepath.Join(dir, "config.yml")
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			return nil, fmt.Errorf("writing the registry config: %w", err)
		}
		p, err := process.Start(process.Options{
			Name: "distribution", Path: bin, Dir: dir,
			Args: []string{"serve", cfgPath},
			// No tracing exporter: it would try to reach a collector.
			Env: []string{"OTEL_TRACES_EXPORTER=none"},
		})
		if err != nil {
			return nil, err
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		lastErr = p.WaitFor(wctx, 50*time.Millisecond, func(ctx context.Context) error { return answers(ctx, addr) })
		cancel()
		if lastErr == nil {
			r := &Registry{Host: addr, proc: p, stop: func() error { return p.Stop(5 * time.Second) }}
			if front != nil {
				r.Host, r.stop = withFront(front, addr, opts.Token, r.stop)
			}
			return r, nil
		}
		retry := p.IsAddrInUse()
		_ = p.Stop(5 * time.Second)
		if !retry {
			break
		}
	}
	if front != nil {
		front.Close()
	}
	return nil, fmt.Errorf("starting the distribution registry: %w", lastErr)
}

// distributionConfig is the registry's configuration: filesystem storage
// under dir, deletes on (tests delete manifests), no upload purging (it
// would race slow tests), no access log.
func distributionConfig(dir, addr, authCfg string) string {
	return fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: %s
%s`, filepath.Join(dir, "storage"), addr, authCfg)
}

// answers reports whether the registry at addr serves the API. With auth on,
// an anonymous GET /v2/ is refused: that is the registry answering.
func answers(ctx context.Context, addr string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v2/", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusUnauthorized {
		return fmt.Errorf("GET /v2/: %s", resp.Status)
	}
	return nil
}

// withFront serves the token service at TokenPath on l and proxies every
// other request to the registry at addr, keeping the Host header so the
// registry's upload locations name the front end. It returns the front's
// host and a stop function ending both.
func withFront(l net.Listener, addr string, ti *TokenIssuer, stopRegistry func() error) (string, func() error) {
	target := &url.URL{Scheme: "http", Host: addr}
	mux := http.NewServeMux()
	mux.Handle(TokenPath, ti)
	mux.Handle("/", &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Host = pr.In.Host
	}})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return l.Addr().String(), func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return errors.Join(srv.Shutdown(ctx), stopRegistry())
	}
}

// authConfig writes the files an auth method needs into dir and returns the
// config section naming them.
func authConfig(dir string, opts DistributionOptions, realm string) (string, error) {
	switch {
	case opts.Token != nil:
		bundle := filepath.Join(dir, "token-issuer.pem")
		if err := os.WriteFile(bundle, opts.Token.RootCertPEM, 0o600); err != nil {
			return "", fmt.Errorf("writing the token issuer's certificate: %w", err)
		}
		return fmt.Sprintf("auth:\n  token:\n    realm: %s\n    service: %s\n    issuer: %s\n    rootcertbundle: %s\n",
			realm, opts.Token.Service, opts.Token.Issuer, bundle), nil
	case opts.Htpasswd != nil:
		var b strings.Builder
		for _, user := range slices.Sorted(maps.Keys(opts.Htpasswd)) {
			// The minimum cost keeps a test's many requests cheap; the
			// registry checks any bcrypt cost the same way.
			h, err := bcrypt.GenerateFromPassword([]byte(opts.Htpasswd[user]), bcrypt.MinCost)
			if err != nil {
				return "", fmt.Errorf("hashing the password of %s: %w", user, err)
			}
			fmt.Fprintf(&b, "%s:%s\n", user, h)
		}
		file := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
			return "", fmt.Errorf("writing the htpasswd file: %w", err)
		}
		return fmt.Sprintf("auth:\n  htpasswd:\n    realm: reloader-test-registry\n    path: %s\n", file), nil
	}
	return "", nil
}

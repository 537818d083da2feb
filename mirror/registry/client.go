// Package registry is the small OCI distribution client reloader-mirror moves
// releases with. It speaks the distribution API directly (on top of
// go-containerregistry's authenticating transport) rather than through
// go-containerregistry's remote package, because a mirror needs control that
// remote hides: raw manifest bytes in and out so digests never change, a
// streaming blob upload it can count and retry, cross-repository mounts, the
// referrers API probed rather than assumed, and registry quirks (Artifactory
// answering 403 for a missing tag) handled in one place.
package registry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Options configures a Client.
type Options struct {
	// Keychain resolves credentials; nil means Docker config files and
	// credential helpers (authn.DefaultKeychain).
	Keychain authn.Keychain
	// CAFile adds a PEM CA bundle to the system roots, for registries with
	// an internal CA.
	CAFile string
	// Insecure skips TLS certificate verification.
	Insecure bool
	// PlainHTTP talks HTTP instead of HTTPS to every registry.
	PlainHTTP bool
	// Transport is the base transport; nil builds one from the options.
	Transport http.RoundTripper
	// UserAgent is sent with every request.
	UserAgent string
}

// Client talks to any number of registries; it is safe for concurrent use.
type Client struct {
	opts Options
	base http.RoundTripper

	mu    sync.Mutex
	repos map[string]*Repository
}

// New builds a Client.
func New(opts Options) (*Client, error) {
	if opts.Keychain == nil {
		opts.Keychain = authn.DefaultKeychain
	}
	base := opts.Transport
	if base == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 32
		tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if opts.CAFile != "" {
			pem, err := os.ReadFile(opts.CAFile)
			if err != nil {
				return nil, fmt.Errorf("reading CA file %s: %w", opts.CAFile, err)
			}
			pool, err := x509.SystemCertPool()
			if err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("CA file %s holds no PEM certificate", opts.CAFile)
			}
			tlsCfg.RootCAs = pool
		}
		if opts.Insecure {
			tlsCfg.InsecureSkipVerify = true //nolint:gosec // the user asked for --insecure
		}
		t.TLSClientConfig = tlsCfg
		base = t
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "reloader-mirror"
	}
	return &Client{opts: opts, base: base, repos: map[string]*Repository{}}, nil
}

// Repository returns a handle on one repository ("host/path"), authenticated
// for pull, and for push too when push is set.
func (c *Client) Repository(ctx context.Context, repo string, push bool) (*Repository, error) {
	key := fmt.Sprintf("%s|%t", repo, push)
	c.mu.Lock()
	r, ok := c.repos[key]
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	var nopts []name.Option
	if c.opts.PlainHTTP {
		nopts = append(nopts, name.Insecure)
	}
	ref, err := name.NewRepository(repo, append(nopts, name.StrictValidation)...)
	if err != nil {
		return nil, fmt.Errorf("parsing repository %q: %w", repo, err)
	}
	auth, err := authn.Resolve(ctx, c.opts.Keychain, ref.Registry)
	if err != nil {
		return nil, fmt.Errorf("resolving credentials for %s: %w", ref.RegistryStr(), err)
	}
	cfg, err := authn.Authorization(ctx, auth)
	if err != nil {
		return nil, fmt.Errorf("reading the credentials for %s: %w", ref.RegistryStr(), err)
	}
	right := transport.PullScope
	if push {
		// The push scope is "pull,push": a push reads back what it wrote.
		right = transport.PushScope
	}
	rt, err := transport.NewWithContext(ctx, ref.Registry, auth, c.base, []string{ref.Scope(right)})
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) && (te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden) {
			return nil, &DeniedError{Registry: ref.RegistryStr(), Repository: ref.RepositoryStr(), Right: lastRight(right),
				User: userOf(cfg), Rejected: userOf(cfg) != "", Status: te.StatusCode, Detail: "the token service refused them: " + err.Error()}
		}
		return nil, fmt.Errorf("connecting to %s for %s: %w", ref.RegistryStr(), repo, err)
	}
	r = &Repository{
		Name:      repo,
		path:      ref.RepositoryStr(),
		host:      ref.RegistryStr(),
		base:      ref.Registry.Scheme() + "://" + ref.RegistryStr(),
		hc:        &http.Client{Transport: rt},
		userAgent: c.opts.UserAgent,
		user:      userOf(cfg),
	}
	c.mu.Lock()
	c.repos[key] = r
	c.mu.Unlock()
	return r, nil
}

// Error is an unexpected answer from a registry.
type Error struct {
	Method, URL string
	Status      int
	// Body is the start of the response body (registries explain there).
	Body string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d %s", e.Method, e.URL, e.Status, truncate(strings.TrimSpace(e.Body), 300))
}

// DeniedError is a registry refusing an operation: no credentials,
// credentials it rejects, or credentials without the right on the repository
// (a token lacking the scope: HTTP 401 insufficient_scope; or HTTP 403 from
// Artifactory and Harbor's core). Retrying cannot help.
type DeniedError struct {
	// Registry is the host, Repository the path within it.
	Registry, Repository string
	// Right is what the operation needed: "pull" or "push".
	Right string
	// User is the user name sent, "" when no credentials were found.
	User string
	// Rejected says the credentials themselves were refused (a wrong
	// password), not the right.
	Rejected bool
	Status   int
	// Detail is the registry's explanation.
	Detail string
}

func (e *DeniedError) Error() string {
	var msg string
	switch {
	case e.User == "":
		msg = fmt.Sprintf("registry %s denied %s on repository %s to anonymous access: no credentials for %s in the Docker config (set DOCKER_CONFIG or run `docker login %s`)",
			e.Registry, e.Right, e.Repository, e.Registry, e.Registry)
	case e.Rejected:
		msg = fmt.Sprintf("registry %s rejected the credentials of user %q (needed for %s on repository %s): check the login for %s in the Docker config",
			e.Registry, e.User, e.Right, e.Repository, e.Registry)
	default:
		msg = fmt.Sprintf("registry %s denied %s on repository %s to user %q: the user lacks the %s right on %s", e.Registry, e.Right, e.Repository, e.User, e.Right, e.Repository)
	}
	msg += " (HTTP " + strconv.Itoa(e.Status)
	if d := strings.TrimSpace(e.Detail); d != "" {
		msg += ": " + truncate(d, 300)
	}
	return msg + ")"
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// lastRight turns a scope's action list ("pull,push") into the right it
// adds ("push").
func lastRight(actions string) string {
	return actions[strings.LastIndex(actions, ",")+1:]
}

func userOf(cfg *authn.AuthConfig) string {
	switch {
	case cfg == nil:
		return ""
	case cfg.Username != "":
		return cfg.Username
	case cfg.IdentityToken != "" || cfg.RegistryToken != "":
		return "<token>"
	}
	return ""
}

// IsDenied reports whether err is a registry refusing access.
func IsDenied(err error) bool {
	var de *DeniedError
	return errors.As(err, &de)
}

// Temporary reports whether retrying might succeed: server errors, throttling,
// and transport failures such as a reset connection or a body cut short.
func Temporary(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var re *Error
	if errors.As(err, &re) {
		return re.Status >= 500 || re.Status == http.StatusTooManyRequests || re.Status == http.StatusRequestTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe")
}

// IsNotFound reports whether err says the object does not exist.
func IsNotFound(err error) bool {
	var re *Error
	return errors.As(err, &re) && re.Status == http.StatusNotFound
}

// Close drops idle connections, so a registry shutting down right after
// (tests, short CLI runs) does not wait on connections that never carried a
// request.
func (c *Client) Close() {
	if t, ok := c.base.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

package registry

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Grant gives a user actions ("pull", "push", "delete", "*") on the
// repositories matching Repository: a name ("team/app"), every repository
// under a project ("team/*", any depth, as a Harbor project membership), or
// "*" for all.
type Grant struct {
	Repository string
	Actions    []string
}

// User is an account of the token issuer.
type User struct {
	Password string
	Grants   []Grant
	// Catalog allows listing the registry's repositories
	// (registry:catalog:*), which Harbor and Artifactory keep for admins.
	Catalog bool
}

// TokenIssuerOptions configures StartTokenIssuer.
type TokenIssuerOptions struct {
	// Users by name. A request without credentials is anonymous and gets a
	// token granting nothing, as Harbor does for a private project.
	Users map[string]User
	// TTL of an issued token; default five minutes.
	TTL time.Duration
}

// TokenRequest records one request to the token endpoint, for assertions
// about which scopes a client asked for.
type TokenRequest struct {
	// User is "" for an anonymous request.
	User string
	// Requested are the scopes asked for, one "type:name:actions" each.
	Requested []string
	// Granted are the scopes the token carries, in the same form.
	Granted []string
	// Status is the HTTP status of the answer.
	Status int
}

// TokenIssuer is the token service of the Docker registry token
// authentication protocol (https://distribution.github.io/distribution/spec/auth/token/)
// as Harbor and Artifactory run it: basic credentials in, a JWT out that
// grants the requested scopes the user holds and silently drops the rest.
// The registry, not the issuer, refuses the request a token falls short of.
//
// It is an http.Handler for TokenPath. StartDistributionWith serves it on
// the registry's own host and port, where Harbor's and Artifactory's token
// services are; clients (go-containerregistry among them) refuse a token
// realm on another private address.
type TokenIssuer struct {
	// Service is the audience of the tokens; the registry checks it.
	Service string
	// Issuer is the iss claim; the registry checks it.
	Issuer string
	// RootCertPEM is the certificate the registry verifies tokens with.
	RootCertPEM []byte

	opts   TokenIssuerOptions
	signer jose.Signer

	mu       sync.Mutex
	requests []TokenRequest
}

// TokenPath is where the token service answers, as on Harbor.
const TokenPath = "/service/token"

// NewTokenIssuer creates a token service with a fresh signing key.
func NewTokenIssuer(opts TokenIssuerOptions) (*TokenIssuer, error) {
	if opts.TTL <= 0 {
		opts.TTL = 5 * time.Minute
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("token issuer: generating the signing key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "reloader test token issuer"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("token issuer: creating the certificate: %w", err)
	}
	// distribution verifies the x5c chain of each token against its
	// rootcertbundle, the way it verifies Harbor's tokens.
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("x5c", []string{base64.StdEncoding.EncodeToString(der)}))
	if err != nil {
		return nil, fmt.Errorf("token issuer: building the signer: %w", err)
	}
	return &TokenIssuer{
		Service:     "reloader-test-registry",
		Issuer:      "reloader-test-token-issuer",
		RootCertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		opts:        opts,
		signer:      signer,
	}, nil
}

// Requests returns the token requests served so far.
func (ti *TokenIssuer) Requests() []TokenRequest {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return slices.Clone(ti.requests)
}

type resourceActions struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Actions []string `json:"actions"`
}

// ServeHTTP answers token requests (GET with basic credentials and scope
// parameters).
func (ti *TokenIssuer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		// The OAuth2 POST form is optional; clients fall back to GET.
		http.Error(w, "only GET is served", http.StatusNotFound)
		return
	}
	rec := TokenRequest{}
	defer func() {
		ti.mu.Lock()
		ti.requests = append(ti.requests, rec)
		ti.mu.Unlock()
	}()
	var user User
	if name, pass, ok := r.BasicAuth(); ok {
		u, known := ti.opts.Users[name]
		if !known || u.Password != pass {
			rec.User, rec.Status = name, http.StatusUnauthorized
			w.Header().Set("WWW-Authenticate", `Basic realm="reloader test token issuer"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"invalid username or password"}]}`, http.StatusUnauthorized)
			return
		}
		rec.User, user = name, u
	}
	if svc := r.URL.Query().Get("service"); svc != "" && svc != ti.Service {
		rec.Status = http.StatusBadRequest
		http.Error(w, fmt.Sprintf("unknown service %q", svc), http.StatusBadRequest)
		return
	}
	// Clients send one scope parameter per resource, or several
	// space-separated in one (the form of a WWW-Authenticate challenge).
	var access []resourceActions
	for _, param := range r.URL.Query()["scope"] {
		for _, scope := range strings.Fields(param) {
			rec.Requested = append(rec.Requested, scope)
			ra, ok := parseScope(scope)
			if !ok {
				continue
			}
			if granted := user.allowed(ra); len(granted) > 0 {
				ra.Actions = granted
				access = append(access, ra)
				rec.Granted = append(rec.Granted, ra.Type+":"+ra.Name+":"+strings.Join(granted, ","))
			}
		}
	}
	now := time.Now()
	claims := struct {
		jwt.Claims
		Access []resourceActions `json:"access"`
	}{
		Claims: jwt.Claims{
			Issuer: ti.Issuer, Subject: rec.User, Audience: jwt.Audience{ti.Service},
			IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now.Add(-time.Minute)),
			Expiry: jwt.NewNumericDate(now.Add(ti.opts.TTL)), ID: fmt.Sprintf("%d", now.UnixNano()),
		},
		Access: access,
	}
	if claims.Access == nil {
		claims.Access = []resourceActions{}
	}
	tok, err := jwt.Signed(ti.signer).Claims(claims).Serialize()
	if err != nil {
		rec.Status = http.StatusInternalServerError
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	rec.Status = http.StatusOK
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"token": tok, "access_token": tok, "expires_in": int(ti.opts.TTL.Seconds()), "issued_at": now.UTC().Format(time.RFC3339),
	})
}

// parseScope splits "repository:team/app:pull,push". A repository name may
// hold a port-less host part but never a colon, except in the type's class
// ("repository(plugin):name:pull"), which is kept in the type.
func parseScope(s string) (resourceActions, bool) {
	i, j := strings.Index(s, ":"), strings.LastIndex(s, ":")
	if i < 0 || i == j {
		return resourceActions{}, false
	}
	return resourceActions{Type: s[:i], Name: s[i+1 : j], Actions: strings.Split(s[j+1:], ",")}, true
}

// allowed returns the requested actions u holds on ra.
func (u User) allowed(ra resourceActions) []string {
	var out []string
	for _, want := range ra.Actions {
		ok := false
		switch ra.Type {
		case "registry":
			ok = ra.Name == "catalog" && u.Catalog
		case "repository":
			for _, g := range u.Grants {
				if g.matches(ra.Name) && (slices.Contains(g.Actions, want) || slices.Contains(g.Actions, "*")) {
					ok = true
					break
				}
			}
		}
		if ok && !slices.Contains(out, want) {
			out = append(out, want)
		}
	}
	return out
}

func (g Grant) matches(repo string) bool {
	if project, ok := strings.CutSuffix(g.Repository, "/*"); ok {
		return strings.HasPrefix(repo, project+"/")
	}
	return g.Repository == "*" || g.Repository == repo
}

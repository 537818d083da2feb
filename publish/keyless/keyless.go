// Package keyless obtains a keyless signer in GitHub Actions: an ephemeral
// ECDSA key, the workflow's OIDC token, a Fulcio certificate binding the key
// to the workflow identity, and Rekor as the transparency log of every
// Sigstore bundle. The certificate lives ten minutes, so New is called when
// signing starts, not when the release does.
package keyless

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	sigsign "github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
)

// The public-good Sigstore instance.
const (
	PublicFulcio = "https://fulcio.sigstore.dev"
	PublicRekor  = "https://rekor.sigstore.dev"
)

// Options configures New.
type Options struct {
	FulcioURL, RekorURL string
	// IDToken is the OIDC token; empty fetches GitHub Actions' token.
	IDToken string
	// HTTP is the client for the token request; nil uses a 30 s client.
	HTTP *http.Client
}

// New returns a keyless signer whose identity is what the certificate
// Fulcio issued says (the workflow's URI and the token issuer).
func New(ctx context.Context, opts Options) (*sign.Signer, error) {
	if opts.FulcioURL == "" {
		opts.FulcioURL = PublicFulcio
	}
	if opts.RekorURL == "" {
		opts.RekorURL = PublicRekor
	}
	tok := opts.IDToken
	if tok == "" {
		var err error
		if tok, err = GitHubIDToken(ctx, opts.HTTP); err != nil {
			return nil, err
		}
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("keyless signing: generating the ephemeral key: %w", err)
	}
	sv, err := signature.LoadECDSASignerVerifier(priv, crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("keyless signing: %w", err)
	}
	kp, err := sign.Keypair(sv)
	if err != nil {
		return nil, fmt.Errorf("keyless signing: %w", err)
	}
	der, err := sigsign.NewFulcio(&sigsign.FulcioOptions{BaseURL: opts.FulcioURL, Retries: 2}).
		GetCertificate(ctx, kp, &sigsign.CertificateProviderOptions{IDToken: tok})
	if err != nil {
		return nil, fmt.Errorf("keyless signing: obtaining a certificate from %s: %w", opts.FulcioURL, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("keyless signing: reading the certificate from %s: %w", opts.FulcioURL, err)
	}
	sum, err := certificate.SummarizeCertificate(cert)
	if err != nil {
		return nil, fmt.Errorf("keyless signing: reading the certificate identity: %w", err)
	}
	certPEM, err := cryptoutils.MarshalCertificateToPEM(cert)
	if err != nil {
		return nil, err
	}
	return sign.Keyless(sign.KeylessOptions{
		SignerVerifier: sv, Cert: certPEM,
		Identity: release.Signer{Identity: sum.SubjectAlternativeName, Issuer: sum.Issuer},
		Bundle: sigsign.BundleOptions{
			CertificateProvider: fixedCert(der),
			TransparencyLogs:    []sigsign.Transparency{sigsign.NewRekor(&sigsign.RekorOptions{BaseURL: opts.RekorURL, Retries: 2})},
		},
	})
}

type fixedCert []byte

func (c fixedCert) GetCertificate(context.Context, sigsign.Keypair, *sigsign.CertificateProviderOptions) ([]byte, error) {
	return c, nil
}

// GitHubIDToken requests the workflow's OIDC token for audience "sigstore".
// It needs `permissions: id-token: write` on the job.
func GitHubIDToken(ctx context.Context, hc *http.Client) (string, error) {
	reqURL, bearer := os.Getenv("ACTIONS_ID_TOKEN_REQUEST_URL"), os.Getenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN")
	if reqURL == "" || bearer == "" {
		return "", errors.New("keyless signing: no GitHub Actions OIDC token available (is id-token: write granted?)")
	}
	u, err := url.Parse(reqURL)
	if err != nil {
		return "", fmt.Errorf("keyless signing: token request URL: %w", err)
	}
	q := u.Query()
	q.Set("audience", "sigstore")
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("keyless signing: requesting the OIDC token: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("keyless signing: reading the OIDC token: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("keyless signing: OIDC token request: %s", resp.Status)
	}
	var out struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Value == "" {
		return "", errors.New("keyless signing: the OIDC token response holds no token")
	}
	return out.Value, nil
}

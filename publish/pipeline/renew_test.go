package pipeline

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"strings"
	"testing"
	"time"

	sigsign "github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
)

// A keyless release is signed subject by subject, each signature timestamped
// when it is made; one made after its certificate expired never verifies.
// Seen on a cold CI machine: the sign step of a real release outlasted the
// ten minutes of its certificate, and the lock, signed last, was refused.
// So the pipeline takes a fresh certificate whenever the one it holds is
// within certificateMargin of expiring, and never signs with another
// identity than the release's.
func TestAKeylessSignerIsRenewedBeforeItsCertificateExpires(t *testing.T) {
	workflow := release.Signer{Identity: "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3", Issuer: "https://token.actions.githubusercontent.com"}
	var issued []time.Duration
	lifetimes := []time.Duration{time.Minute, 10 * time.Minute}
	r := &run{opts: Options{NewSigner: func(context.Context) (*sign.Signer, error) {
		life := lifetimes[len(issued)%len(lifetimes)]
		issued = append(issued, life)
		return keylessFor(t, workflow, life), nil
	}}}

	first, err := r.currentSigner(t.Context())
	if err != nil || len(issued) != 1 {
		t.Fatalf("the first signer: %v, %d certificates issued", err, len(issued))
	}
	second, err := r.currentSigner(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if second == first || len(issued) != 2 || time.Until(second.NotAfter()) < certificateMargin {
		t.Fatalf("a certificate with a minute left was not renewed: %d issued, the signer's expires in %s", len(issued), time.Until(second.NotAfter()).Round(time.Second))
	}
	if third, err := r.currentSigner(t.Context()); err != nil || third != second || len(issued) != 2 {
		t.Fatalf("a certificate with ten minutes left was renewed (%d issued, %v)", len(issued), err)
	}

	// A renewal that comes back with another identity stops the release.
	r.opts.Signer = keylessFor(t, workflow, time.Minute)
	other := release.Signer{Identity: "https://github.com/someone/else/.github/workflows/x.yml@refs/heads/main", Issuer: workflow.Issuer}
	r.opts.NewSigner = func(context.Context) (*sign.Signer, error) { return keylessFor(t, other, 10*time.Minute), nil }
	if _, err := r.currentSigner(t.Context()); err == nil || !strings.Contains(err.Error(), other.Identity) || !strings.Contains(err.Error(), workflow.Identity) {
		t.Fatalf("a renewed certificate of another identity: %v; want an error naming both", err)
	}
}

func TestAKeySignerIsNeverRenewed(t *testing.T) {
	priv, _, err := sign.GenerateKey(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	key, err := sign.FromKey(sign.KeyOptions{PrivateKeyPath: priv})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	r := &run{opts: Options{Signer: key, NewSigner: func(context.Context) (*sign.Signer, error) { calls++; return key, nil }}}
	if s, err := r.currentSigner(t.Context()); err != nil || s != key || calls != 0 || !key.NotAfter().IsZero() {
		t.Fatalf("a key signer: %v, NewSigner called %d times, NotAfter %s", err, calls, key.NotAfter())
	}
}

// keylessFor is a keyless signer whose certificate, for id, expires after
// life; it never signs here, so its certificate is self-issued.
func keylessFor(t *testing.T, id release.Signer, life time.Duration) *sign.Signer {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: "sigstore"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(life), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, priv.Public(), priv)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := cryptoutils.MarshalCertificateToPEM(cert)
	if err != nil {
		t.Fatal(err)
	}
	sv, err := signature.LoadECDSASignerVerifier(priv, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sign.Keyless(sign.KeylessOptions{SignerVerifier: sv, Cert: pem, Identity: id,
		Bundle: sigsign.BundleOptions{CertificateProvider: staticCert(der)}, Timestamper: noTimestamps{}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type staticCert []byte

func (c staticCert) GetCertificate(context.Context, sigsign.Keypair, *sigsign.CertificateProviderOptions) ([]byte, error) {
	return c, nil
}

type noTimestamps struct{}

func (noTimestamps) Timestamp(context.Context, []byte) ([]byte, error) { return nil, nil }

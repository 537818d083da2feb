// Package virtualsigstore signs releases keyless with sigstore-go's
// VirtualSigstore (a Fulcio CA, a TSA and log keys in memory), so tests can
// run the real keyless signing and verification offline, and forge a
// release with a second, attacker-controlled Sigstore.
package virtualsigstore

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/sigstore/sigstore-go/pkg/root"
	sigsign "github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
)

// fixedCert hands sigstore-go the certificate the virtual Fulcio issued.
type fixedCert []byte

func (c fixedCert) GetCertificate(context.Context, sigsign.Keypair, *sigsign.CertificateProviderOptions) ([]byte, error) {
	return c, nil
}

// tsa timestamps signatures with the VirtualSigstore's TSA, which is what
// anchors the short-lived certificate offline.
type tsa struct{ vs *ca.VirtualSigstore }

func (v tsa) Timestamp(_ context.Context, sig []byte) ([]byte, error) {
	return v.vs.TimestampResponse(sig)
}

// Signer is a keyless signer whose certificate vs issued for identity and
// issuer; its bundles carry a TSA timestamp, and a log entry in each of logs
// (none: no log entry).
func Signer(vs *ca.VirtualSigstore, identity, issuer string, logs ...sigsign.Transparency) (*sign.Signer, error) {
	leaf, priv, err := vs.GenerateLeafCert(identity, issuer)
	if err != nil {
		return nil, fmt.Errorf("issuing a virtual Fulcio certificate: %w", err)
	}
	return keyless(vs, leaf, priv, identity, issuer, logs)
}

// keyless signs with leaf's key, timestamped by vs's TSA.
func keyless(vs *ca.VirtualSigstore, leaf *x509.Certificate, priv crypto.PrivateKey, identity, issuer string, logs []sigsign.Transparency) (*sign.Signer, error) {
	ek, ok := priv.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("virtual Fulcio certificate key is a %T", priv)
	}
	sv, err := signature.LoadECDSASignerVerifier(ek, crypto.SHA256)
	if err != nil {
		return nil, err
	}
	certPEM, err := cryptoutils.MarshalCertificateToPEM(leaf)
	if err != nil {
		return nil, err
	}
	return sign.Keyless(sign.KeylessOptions{SignerVerifier: sv, Cert: certPEM,
		Identity:    release.Signer{Identity: identity, Issuer: issuer},
		Bundle:      sigsign.BundleOptions{CertificateProvider: fixedCert(leaf.Raw), TransparencyLogs: logs},
		Timestamper: tsa{vs}})
}

// TrustedRoot is vs's trusted root: its CA, CT logs, TSA and Rekor keys.
func TrustedRoot(vs *ca.VirtualSigstore) (*root.TrustedRoot, error) {
	return root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), vs.CTLogs(),
		vs.TimestampingAuthorities(), vs.RekorLogs())
}

// WriteTrustedRoot writes vs's trusted_root.json to path.
func WriteTrustedRoot(vs *ca.VirtualSigstore, path string) error {
	tr, err := TrustedRoot(vs)
	if err != nil {
		return err
	}
	b, err := tr.MarshalJSON()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

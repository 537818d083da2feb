package virtualsigstore

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"time"

	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	"github.com/sigstore/sigstore-go/pkg/root"
	sigsign "github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/reloader-dev/reloader/publish/sign"
)

// Source is what GitHub's Fulcio writes into a workflow's certificate about
// the code that ran: the repository (source repository URI), the commit
// (source repository digest) and the git ref. An empty field is left out of
// the certificate, as a CA that does not issue it would.
type Source struct{ URI, Digest, Ref string }

// SourceOf is the Source GitHub's Fulcio writes for a release workflow run
// on refs/tags/<version> of commit in repository (https://github.com/o/r).
func SourceOf(repository, commit, version string) Source {
	return Source{URI: repository, Digest: commit, Ref: "refs/tags/" + version}
}

// GitHubCA is a Fulcio CA that issues certificates as GitHub Actions gets
// them: a URI identity, the issuer and the Source extensions. sigstore-go's
// VirtualSigstore issues only the identity and issuer and keeps its CA key
// to itself, so this CA has its own key and takes the VirtualSigstore's
// timestamp authority and logs; verify against its TrustedRoot.
type GitHubCA struct {
	vs           *ca.VirtualSigstore
	authority    *root.FulcioCertificateAuthority
	intermediate *x509.Certificate
	key          *ecdsa.PrivateKey
}

// NewGitHubCA makes a CA that timestamps and logs through vs.
func NewGitHubCA(vs *ca.VirtualSigstore) (*GitHubCA, error) {
	rootCert, rootKey, err := ca.GenerateRootCa()
	if err != nil {
		return nil, fmt.Errorf("making the GitHub test CA: %w", err)
	}
	inter, key, err := ca.GenerateFulcioIntermediate(rootCert, rootKey)
	if err != nil {
		return nil, fmt.Errorf("making the GitHub test CA: %w", err)
	}
	return &GitHubCA{vs: vs, intermediate: inter, key: key, authority: &root.FulcioCertificateAuthority{
		Root: rootCert, Intermediates: []*x509.Certificate{inter},
		ValidityPeriodStart: time.Now().Add(-time.Hour), ValidityPeriodEnd: time.Now().Add(time.Hour),
	}}, nil
}

// TrustedRoot anchors the CA's certificates, with the VirtualSigstore's
// timestamp authority and logs.
func (g *GitHubCA) TrustedRoot() (*root.TrustedRoot, error) {
	return root.NewTrustedRoot(root.TrustedRootMediaType01, []root.CertificateAuthority{g.authority}, g.vs.CTLogs(),
		g.vs.TimestampingAuthorities(), g.vs.RekorLogs())
}

// Signer is a keyless signer whose certificate names identity, issuer and
// src; its bundles carry a timestamp and an entry in each of logs.
func (g *GitHubCA) Signer(identity, issuer string, src Source, logs ...sigsign.Transparency) (*sign.Signer, error) {
	leaf, priv, err := g.issue(identity, issuer, src)
	if err != nil {
		return nil, err
	}
	return keyless(g.vs, leaf, priv, identity, issuer, logs)
}

func (g *GitHubCA) issue(identity, issuer string, src Source) (*x509.Certificate, crypto.PrivateKey, error) {
	u, err := url.Parse(identity)
	if err != nil {
		return nil, nil, fmt.Errorf("certificate identity %q: %w", identity, err)
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	// Fulcio still writes the deprecated v1 issuer beside v2; so does this CA.
	exts := []pkix.Extension{{Id: certificate.OIDIssuer, Value: []byte(issuer)}} //lint:ignore SA1019 real Fulcio certificates carry it
	for _, e := range []struct {
		id  asn1.ObjectIdentifier
		val string
	}{{certificate.OIDIssuerV2, issuer}, {certificate.OIDSourceRepositoryURI, src.URI}, {certificate.OIDSourceRepositoryDigest, src.Digest}, {certificate.OIDSourceRepositoryRef, src.Ref}} {
		if e.val == "" {
			continue
		}
		der, err := asn1.MarshalWithParams(e.val, "utf8")
		if err != nil {
			return nil, nil, err
		}
		exts = append(exts, pkix.Extension{Id: e.id, Value: der})
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), URIs: []*url.URL{u},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(10 * time.Minute),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning}, ExtraExtensions: exts}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, g.intermediate, &priv.PublicKey, g.key)
	if err != nil {
		return nil, nil, fmt.Errorf("issuing a GitHub test certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return leaf, priv, nil
}

// CertificateAuthorities is the CA, for a trusted root that anchors it
// beside others (the VirtualSigstore's own).
func (g *GitHubCA) CertificateAuthorities() []root.CertificateAuthority {
	return []root.CertificateAuthority{g.authority}
}

// WriteTrustedRoot writes the CA's trusted_root.json (see TrustedRoot) to
// path.
func (g *GitHubCA) WriteTrustedRoot(path string) error {
	tr, err := g.TrustedRoot()
	if err != nil {
		return err
	}
	b, err := tr.MarshalJSON()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

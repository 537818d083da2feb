package admission

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"sort"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// material is a trusted root in the PEM forms admission controllers take.
type material struct {
	cas   []authority // Fulcio certificate authorities
	tsas  []authority // RFC 3161 timestamp authorities
	tlogs []tlog      // Rekor
	ctlog []tlog      // certificate transparency logs
}

// timestampOnly reports whether the root makes a timestamp authority's
// signed timestamp the time source on its own, as trust.Policy does: it
// lists an authority and no transparency log, so no log entry could be
// verified against it anyway.
func (m *material) timestampOnly() bool {
	return m != nil && len(m.tlogs) == 0 && len(m.tsas) > 0
}

type authority struct {
	uri, organization, commonName string
	// chainPEM is the chain from the issuing certificate up to the root.
	chainPEM string
}

type tlog struct {
	baseURL, hashAlgorithm, publicKeyPEM string
}

// parseTrustedRoot reads a Sigstore trusted_root.json. A root without a
// certificate authority could anchor no keyless certificate, so it is refused
// rather than written into a policy that admits nothing (or, in a tool that
// falls back to a default root, something else).
func parseTrustedRoot(b []byte) (*material, error) {
	tr, err := root.NewTrustedRootFromJSON(b)
	if err != nil {
		return nil, fmt.Errorf("parsing the trusted root: %w", err)
	}
	m := &material{}
	for _, ca := range tr.FulcioCertificateAuthorities() {
		f, ok := ca.(*root.FulcioCertificateAuthority)
		if !ok || f.Root == nil {
			return nil, fmt.Errorf("trusted root: certificate authority of type %T has no root certificate", ca)
		}
		m.cas = append(m.cas, newAuthority(f.URI, f.Root, f.Intermediates, nil))
	}
	if len(m.cas) == 0 {
		return nil, errors.New("trusted root: no certificate authority: it cannot anchor a keyless certificate")
	}
	for _, ta := range tr.TimestampingAuthorities() {
		s, ok := ta.(*root.SigstoreTimestampingAuthority)
		if !ok || s.Root == nil {
			return nil, fmt.Errorf("trusted root: timestamp authority of type %T has no root certificate", ta)
		}
		m.tsas = append(m.tsas, newAuthority(s.URI, s.Root, s.Intermediates, s.Leaf))
	}
	if m.tlogs, err = logs(tr.RekorLogs(), "transparency log"); err != nil {
		return nil, err
	}
	if m.ctlog, err = logs(tr.CTLogs(), "certificate transparency log"); err != nil {
		return nil, err
	}
	return m, nil
}

func newAuthority(uri string, rootCert *x509.Certificate, intermediates []*x509.Certificate, leaf *x509.Certificate) authority {
	var chain bytes.Buffer
	certs := []*x509.Certificate{}
	if leaf != nil {
		certs = append(certs, leaf)
	}
	// The trusted root lists intermediates from the root down; a PEM chain
	// goes from the issuing certificate up.
	for i := len(intermediates) - 1; i >= 0; i-- {
		certs = append(certs, intermediates[i])
	}
	certs = append(certs, rootCert)
	for _, c := range certs {
		_ = pem.Encode(&chain, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	a := authority{uri: uri, chainPEM: chain.String(), commonName: rootCert.Subject.CommonName}
	if len(rootCert.Subject.Organization) > 0 {
		a.organization = rootCert.Subject.Organization[0]
	}
	return a
}

func logs(in map[string]*root.TransparencyLog, what string) ([]tlog, error) {
	ids := make([]string, 0, len(in))
	for id := range in {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out []tlog
	for _, id := range ids {
		l := in[id]
		p, err := cryptoutils.MarshalPublicKeyToPEM(l.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("trusted root: %s %s: public key: %w", what, l.BaseURL, err)
		}
		out = append(out, tlog{baseURL: l.BaseURL, hashAlgorithm: hashName(l.HashFunc), publicKeyPEM: string(p)})
	}
	return out, nil
}

func hashName(h crypto.Hash) string {
	switch h {
	case crypto.SHA384:
		return "sha-384"
	case crypto.SHA512:
		return "sha-512"
	}
	return "sha-256"
}

// parsePublicKey checks a PEM public key is one cosign can verify with.
func parsePublicKey(s string) (crypto.PublicKey, error) {
	k, err := cryptoutils.UnmarshalPEMToPublicKey([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("parsing PEM public key: %w", err)
	}
	return k, nil
}

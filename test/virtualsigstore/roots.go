package virtualsigstore

import (
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
)

// Parts chooses which of a VirtualSigstore's time sources a trusted root
// lists beside its CAs and CT logs: a root without logs is a Sigstore that
// timestamps but keeps no transparency log (what a verifier must then take
// a signed timestamp for), a root without the timestamp authority is one
// whose timestamps the user does not trust.
type Parts struct {
	NoTSA, NoLogs bool
}

// Root is a trusted root anchoring cas, with vs's CT logs and, unless p
// leaves them out, its timestamp authority and Rekor logs.
func Root(vs *ca.VirtualSigstore, cas []root.CertificateAuthority, p Parts) (*root.TrustedRoot, error) {
	tsas, logs := vs.TimestampingAuthorities(), vs.RekorLogs()
	if p.NoTSA {
		tsas = nil
	}
	if p.NoLogs {
		logs = map[string]*root.TransparencyLog{}
	}
	return root.NewTrustedRoot(root.TrustedRootMediaType01, cas, vs.CTLogs(), tsas, logs)
}

// TrustedRootOf is the CA's trusted root (see TrustedRoot) with only the
// time sources p keeps.
func (g *GitHubCA) TrustedRootOf(p Parts) (*root.TrustedRoot, error) {
	return Root(g.vs, g.CertificateAuthorities(), p)
}

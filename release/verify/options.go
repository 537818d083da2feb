package verify

import (
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/root"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/scancheck"
	"github.com/reloader-dev/reloader/release/trust"
)

// Options says whom to trust and how to reach the registry.
type Options struct {
	// Policy, when set, is whom to trust as the user said it
	// (cli.TrustFlags); Expect, TrustedRoot, IgnoreSCT and IgnoreTlog are
	// then unused. The release pipeline, which verifies its own signature,
	// leaves it nil and gives Expect.
	Policy *trust.Policy
	// Expect is the signer the user expects, obtained independently of
	// the lock (our documentation, a pinned key); the lock must name the
	// same signer.
	Expect release.Signer
	// TrustedRoot is the Sigstore trust root (Fulcio CAs, Rekor, CT logs,
	// timestamp authorities) for keyless signatures; unused for keys.
	TrustedRoot *root.TrustedRoot
	// IgnoreSCT: see trust.Policy.IgnoreSCT. Only for a private or test CA
	// that logs to no certificate transparency log.
	IgnoreSCT bool
	// IgnoreTlog accepts keyless signatures without a transparency-log
	// entry. By default every keyless bundle needs one, as cosign requires.
	IgnoreTlog bool
	// AllowUnboundCertificate: see trust.Policy.AllowUnboundCertificate.
	// Only for a private or test CA that issues no GitHub source extensions.
	AllowUnboundCertificate bool
	// Remote are the registry options (auth, transport).
	Remote []remote.Option
	// ExpectVersion, when set, is the exact version the lock must be
	// (checked after its signature verified).
	ExpectVersion string
	// Scan is the consumer's policy for the lock's signed scan record
	// (scancheck); nil checks nothing, as the release pipeline's own final
	// verification does.
	Scan *scancheck.Policy
}

// Verifier builds the trust verifier for the expected signer.
func (o Options) Verifier() (*trust.Verifier, error) {
	p, err := o.policy()
	if err != nil {
		return nil, err
	}
	p.Scan = o.Scan
	// Every image and index of a release carries signed provenance.
	p.RequireProvenance = true
	p.Expect = trust.Binding{Version: o.ExpectVersion}
	return trust.NewVerifier(p)
}

// policy is whom to trust: the user's policy, or the one that trusts
// exactly the expected signer, with the transparency log required as
// trust.LoadPolicy requires it.
func (o Options) policy() (trust.Policy, error) {
	if o.Policy != nil {
		return *o.Policy, nil
	}
	p, err := trust.PolicyFor(o.Expect, o.TrustedRoot)
	if err != nil {
		return trust.Policy{}, err
	}
	p.IgnoreSCT = o.IgnoreSCT
	p.InsecureIgnoreTlog = o.IgnoreTlog
	p.AllowUnboundCertificate = o.AllowUnboundCertificate
	return p, nil
}

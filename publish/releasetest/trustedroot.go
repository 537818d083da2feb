package releasetest

import (
	"fmt"

	"github.com/reloader-dev/reloader/test/virtualsigstore"
)

// TrustedRootJSONOf is TrustedRootJSON with only the time sources p keeps:
// the trusted root of a Sigstore that timestamps without a transparency log
// (NoLogs), which takes a release signed without Tlog on its RFC 3161
// timestamp alone, or one that does not list the timestamp authority
// (NoTSA), under which that release has no time source at all.
func (s Signer) TrustedRootJSONOf(p virtualsigstore.Parts) ([]byte, error) {
	if s.Sigstore == nil {
		return nil, fmt.Errorf("a trusted root: the signer %s is not keyless", s.KeyPath)
	}
	cas := s.Sigstore.FulcioCertificateAuthorities()
	if s.GitHub != nil {
		cas = append(cas, s.GitHub.CertificateAuthorities()...)
	}
	tr, err := virtualsigstore.Root(s.Sigstore, cas, p)
	if err != nil {
		return nil, fmt.Errorf("building the trusted root: %w", err)
	}
	return tr.MarshalJSON()
}

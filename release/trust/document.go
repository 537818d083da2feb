package trust

import (
	"bytes"
	"fmt"

	sgverify "github.com/sigstore/sigstore-go/pkg/verify"

	"github.com/reloader-dev/reloader/release"
)

// Document checks the Sigstore bundle of a document a release publishes
// beside its lock (a CSAF advisory or VEX document): signed over exactly
// these bytes by the signer the policy trusts, the key of the verified lock
// l when the policy accepts several. A document whose bytes were changed,
// or that another key or identity signed, is ErrUntrusted.
func (v *Verifier) Document(l *release.Lock, what string, data, bundleJSON []byte) error {
	if len(bundleJSON) == 0 {
		return fmt.Errorf("%w: %s: no signature bundle", ErrUntrusted, what)
	}
	kv := v
	if v.byKey != nil {
		var err error
		if kv, err = v.forLock(l); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if _, err := kv.verifyBundle(bundleJSON, sgverify.WithArtifact(bytes.NewReader(data))); err != nil {
		return fmt.Errorf("verifying the signature of %s: %w", what, err)
	}
	return nil
}

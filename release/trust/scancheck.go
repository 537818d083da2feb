package trust

import (
	"fmt"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/scancheck"
)

// checkScan applies the policy's scan check to a lock whose signature has
// verified. A refusal wraps ErrUntrusted, as any other verdict against the
// release does: the scan is part of what the signer vouched for, and a
// vouching that no longer holds today must not be acted on.
func (v *Verifier) checkScan(l *release.Lock) (*scancheck.Result, error) {
	if v.policy.Scan == nil {
		return nil, nil
	}
	res, err := v.policy.Scan.Check(l)
	if err != nil {
		return &res, fmt.Errorf("%w: %w", ErrUntrusted, err)
	}
	return &res, nil
}

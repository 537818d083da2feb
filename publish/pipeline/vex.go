package pipeline

import (
	"context"
	"fmt"

	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/review"
)

// PredicateOpenVEX is the predicate type of the OpenVEX attestation, the one
// `cosign attest --type openvex` writes and `cosign verify-attestation
// --type openvex` checks.
const PredicateOpenVEX = sign.PredicateOpenVEX

// prepareVEX writes the OpenVEX document of the exceptions the gate applied,
// which sign attests on every image and index: a scanner that reads
// attestations learns from the release itself which findings it ships
// knowingly (affected, accepted until a date) and which cannot affect it
// (not_affected, with a justification). A release without exceptions
// attests none. It is the document `reloader-mirror review` regenerates
// later, when an exception may have expired.
func (r *run) prepareVEX(context.Context) error {
	if !r.lock.Scanned() || len(r.lock.Scan.Exceptions) == 0 {
		return nil
	}
	rv, err := r.review(review.Identity{Signer: "release pipeline", Verification: "not yet signed"})
	if err != nil {
		return fmt.Errorf("the OpenVEX document: %w", err)
	}
	doc, err := review.OpenVEX(r.lock, rv)
	if err != nil {
		return err
	}
	r.vex = doc
	return nil
}

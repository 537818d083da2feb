package pipeline

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/reloader-dev/reloader/review"
)

// ReviewPredicateFile is the signed review's predicate in the output
// directory.
const ReviewPredicateFile = "review-attestation.json"

// signedReview is the procurement review the release signs, with the
// predicate attested on each index.
type signedReview struct {
	review    *review.Review
	predicate []byte
}

// prepareSignedReview makes the review that sign attests on every image
// index (predicate type review.PredicateType): a function of the release
// alone (review.BuildSigned), so that reloader-mirror review --verify,
// recomputing it from the release on the disconnected side, arrives at the
// same document, and the page the release publishes is the one whose
// digest is signed.
func (r *run) prepareSignedReview() error {
	in, err := r.reviewInput()
	if err != nil {
		return fmt.Errorf("the signed review: %w", err)
	}
	rv, err := review.BuildSigned(in)
	if err != nil {
		return fmt.Errorf("the signed review: %w", err)
	}
	pred, _, err := review.NewAttestation(rv)
	if err != nil {
		return fmt.Errorf("the signed review: %w", err)
	}
	r.signedReview = &signedReview{review: rv, predicate: pred}
	// Kept beside the lock, as the provenance is, for whoever checks the
	// attestation with cosign rather than reloader-mirror.
	if err := os.WriteFile(filepath.Join(r.opts.OutDir, ReviewPredicateFile), pred, 0o644); err != nil {
		return fmt.Errorf("writing the signed review: %w", err)
	}
	return nil
}

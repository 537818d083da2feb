package main

import (
	"errors"
	"fmt"

	"github.com/reloader-dev/reloader/internal/exitcode"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/review"
)

// review --verify: the review the release signed on each image index, held
// to the review recomputed from the release.

// signedReviewRefused is a signed review that is missing, unverified or not
// the release's: a refusal (exit 3), and nothing is written.
type signedReviewRefused struct{ err error }

func (e signedReviewRefused) Error() string { return "review --verify: " + e.err.Error() }
func (e signedReviewRefused) Unwrap() error { return e.err }

// ExitCode makes a signed review that does not hold a refusal.
func (e signedReviewRefused) ExitCode() exitcode.Code { return exitcode.Refused }

// signedReviewResult is what --verify established.
type signedReviewResult struct {
	// Indexes are the image indexes whose signed review verified.
	Indexes []string `json:"indexes"`
	// HTMLDigest is the sha256 of the signed review's page, the page the
	// release published (review/index.html on its versions page).
	HTMLDigest string `json:"htmlDigest"`
}

// reviewed is a verified release's review, with what it was made from and
// the signed reviews the verification found on its indexes.
type reviewed struct {
	*review.Review
	input  review.Input
	signed []signedStatement
}

// signedStatement is the verified review statement on one image index.
type signedStatement struct {
	index     release.Artifact
	statement []byte
}

// verifySignedReview holds the review signed on each image index to the
// review recomputed from the release: every index must carry one whose
// signature verified under the trust policy, and each must be equal to the
// recomputation.
func verifySignedReview(signed []signedStatement, in review.Input) (*signedReviewResult, error) {
	if len(signed) == 0 {
		return nil, errors.New("the release lists no image index to carry a signed review")
	}
	what := func(s signedStatement) string {
		return fmt.Sprintf("image index %s (%s)", s.index.Name, s.index.Digest)
	}
	// A missing review is said before any comparison: what it lacks
	// changes the recomputation of the others too (its provenance, say).
	for _, s := range signed {
		if s.statement == nil {
			return nil, fmt.Errorf("%s carries no signed review (attestation %s) verified under the trust policy", what(s), review.PredicateType)
		}
	}
	res := &signedReviewResult{Indexes: []string{}}
	for _, s := range signed {
		a, err := review.CheckSigned(s.statement, s.index.Digest, what(s), in)
		if err != nil {
			return nil, err
		}
		res.Indexes = append(res.Indexes, s.index.Name+"@"+s.index.Digest)
		res.HTMLDigest = a.HTMLDigest
	}
	return res, nil
}

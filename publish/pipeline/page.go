package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/reloader-dev/reloader/publish/page"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/security"
	"github.com/reloader-dev/reloader/review"
)

// reviewDir is the procurement review's directory inside the page's.
const reviewDir = "review"

// page writes the versions page with the support table and advisories of
// the checkout, and next to it the procurement review reloader-mirror
// review would write for this release, so a reviewer reads it before
// anything is imported.
func (r *run) page(context.Context) error {
	dir := filepath.Join(r.opts.OutDir, "page")
	if err := r.writeReview(filepath.Join(dir, reviewDir)); err != nil {
		return err
	}
	trustedRoot, err := r.trustedRootJSON()
	if err != nil {
		return err
	}
	return page.Write(dir, r.lock, page.Options{SBOMBaseURL: "../sbom/", LockRef: r.res.LockRef,
		Support: r.support, Advisories: r.advisories, ReviewURL: reviewDir + "/" + review.FileHTML, Provenance: r.provSummaries,
		TrustedRootJSON: trustedRoot, SecurityTxt: r.securityTxt(), CSAF: r.csaf})
}

// securityTxt is the release's security.txt: the declared contact and
// policy, valid until its series' support ends or for less than a year.
func (r *run) securityTxt() []byte {
	var eos time.Time
	if r.support != nil {
		if s, ok := r.support.SeriesOf(r.opts.Version); ok {
			eos = s.EndOfSupport.Time
		}
	}
	return r.security.Text(security.Expires(r.opts.Created, eos))
}

// trustedRootJSON is the trusted root the keyless release was just verified
// against, as the page publishes it (with its sha256, which disconnected
// users pass to reloader-mirror); nil for a key-signed release.
func (r *run) trustedRootJSON() ([]byte, error) {
	if !r.lock.Signer.Keyless() || r.opts.Verify.TrustedRoot == nil {
		return nil, nil
	}
	b, err := r.opts.Verify.TrustedRoot.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("writing the versions page: encoding the trusted root: %w", err)
	}
	return b, nil
}

// writeReview writes the review the release signed: its page is the one
// whose digest the attestation carries, so a reviewer can show that the
// page they approved is the release's.
func (r *run) writeReview(dir string) error {
	if r.signedReview == nil {
		return errors.New("writing the review: no signed review")
	}
	return review.Write(dir, r.lock, r.signedReview.review, nil)
}

// reviewInput is what a review of the release as it stands is made from.
func (r *run) reviewInput() (review.Input, error) {
	// The built-in policy, the one a reviewer's reloader-mirror review
	// applies by default, so the release's page and theirs agree.
	lp, err := review.DefaultLicencePolicy()
	if err != nil {
		return review.Input{}, err
	}
	var sboms []review.SBOM
	for _, a := range r.lock.Artifacts {
		if a.Kind != release.KindSBOM {
			continue
		}
		for _, bi := range r.images {
			if bi.digest.String() != a.Subject {
				continue
			}
			for _, d := range bi.docs {
				if d.MediaType == a.ArtifactType {
					sboms = append(sboms, review.SBOM{Artifact: a, Data: d.Data})
				}
			}
		}
	}
	return review.Input{Lock: r.lock, SBOMs: sboms, Gate: r.res.Gate, Licences: lp, Now: r.opts.Now, Provenance: r.provSummaries}, nil
}

// review is the procurement review of the release as it stands.
func (r *run) review(id review.Identity) (*review.Review, error) {
	in, err := r.reviewInput()
	if err != nil {
		return nil, err
	}
	in.Identity = id
	return review.Build(in)
}

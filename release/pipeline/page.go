package pipeline

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/page"
	"github.com/reloader-dev/reloader/release/support"
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
	tab, err := support.ReadTable(filepath.Join(r.opts.ModuleDir, "release", "support.yaml"))
	if err != nil {
		return err
	}
	advisories, err := support.ReadAdvisories(filepath.Join(r.opts.ModuleDir, "release", "advisories"))
	if err != nil {
		return err
	}
	if err := r.writeReview(filepath.Join(dir, reviewDir)); err != nil {
		return err
	}
	return page.Write(dir, r.lock, page.Options{SBOMBaseURL: "../sbom/", LockRef: r.res.LockRef,
		Support: tab, Advisories: advisories, ReviewURL: reviewDir + "/" + review.FileHTML, Provenance: r.provSummaries})
}

func (r *run) writeReview(dir string) error {
	lockData, err := os.ReadFile(r.res.LockPath)
	if err != nil {
		return fmt.Errorf("writing the review: %w", err)
	}
	signer := "public key (cosign.pub)"
	if s := r.lock.Signer; s.Keyless() {
		signer = "keyless: " + s.Identity + s.IdentityRegexp + " issued by " + s.Issuer
	}
	id := review.Identity{Signer: signer, LockDigest: fmt.Sprintf("sha256:%x", sha256.Sum256(lockData)),
		Verification: "verified offline by the release pipeline before its tags were published"}
	rv, err := r.review(id)
	if err != nil {
		return err
	}
	return review.Write(dir, r.lock, rv, nil)
}

// review is the procurement review of the release as it stands.
func (r *run) review(id review.Identity) (*review.Review, error) {
	lp, err := review.ReadLicencePolicy(filepath.Join(r.opts.ModuleDir, "policy", "licence-policy.yaml"))
	if err != nil {
		return nil, err
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
	return review.Build(review.Input{Lock: r.lock, Identity: id, SBOMs: sboms, Gate: r.res.Gate, Licences: lp, Now: r.opts.Now})
}

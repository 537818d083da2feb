package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/provenance"
	"github.com/reloader-dev/reloader/review"
)

// sign signs every subject of the release, attests its SBOMs and
// provenance, and records each signature and attestation manifest in the
// lock. It stays whole: one pass over the subjects, in the lock's order.
func (r *run) sign(ctx context.Context) error {
	signer, err := r.currentSigner(ctx)
	if err != nil {
		return err
	}
	r.lock.Signer = signer.Identity()
	// The review names the signer, so it is made once the signer is known
	// and before anything is signed: it is attested with the rest.
	if err := r.prepareSignedReview(); err != nil {
		return err
	}
	format, err := r.opts.SignatureFormat.For(signer)
	if err != nil {
		return err
	}
	reg := sign.Registry{Remote: r.ropts}
	var subjects []release.Artifact
	for _, a := range r.lock.Artifacts {
		switch a.Kind {
		case release.KindImageIndex, release.KindImage, release.KindSBOM, release.KindChart:
			subjects = append(subjects, a)
		}
	}
	for _, a := range subjects {
		if err := r.signSubject(ctx, reg, format, a); err != nil {
			return err
		}
	}
	if format.Tags() {
		// Record the cosign signature and attestation manifests, so a
		// mirror copies them by digest like everything else.
		for _, a := range subjects {
			hex := a.Digest[len("sha256:"):]
			sigTag, err := name.NewTag(fmt.Sprintf("%s:sha256-%s.sig", a.Repository, hex))
			if err != nil {
				return err
			}
			if err := r.addLockEntry(release.Artifact{Kind: release.KindSignature, Name: a.Name, Variant: a.Variant, Platform: a.Platform,
				Repository: a.Repository, Tag: sigTag.TagStr(), Subject: a.Digest}, sigTag); err != nil {
				return err
			}
			if atts, _ := r.attestationsOf(a); len(atts) > 0 {
				attTag, _ := name.NewTag(fmt.Sprintf("%s:sha256-%s.att", a.Repository, hex))
				if err := r.addLockEntry(release.Artifact{Kind: release.KindAttestation, Name: a.Name, Variant: a.Variant, Platform: a.Platform,
					Repository: a.Repository, Tag: attTag.TagStr(), Subject: a.Digest}, attTag); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// signSubject signs one subject and attests what is attested about it, in
// each form format publishes: Sigstore bundle referrers (a keyless signer's
// only form; cosign v3's default) and the cosign .sig/.att tags CRI-O reads.
// A key-signed release in both forms verifies with cosign v3 --key
// --insecure-ignore-tlog; cosign v2, which switches to the bundle format as
// soon as a subject has any bundle referrer, then wants a trusted root.
func (r *run) signSubject(ctx context.Context, reg sign.Registry, format sign.Format, a release.Artifact) error {
	ref, err := name.NewDigest(a.Repository + "@" + a.Digest)
	if err != nil {
		return err
	}
	atts, err := r.attestationsOf(a)
	if err != nil {
		return err
	}
	// A keyless certificate may be renewed between subjects.
	signer, err := r.currentSigner(ctx)
	if err != nil {
		return err
	}
	if format.Bundles() {
		if err := r.signWithBundles(ctx, reg, signer, a, ref, atts); err != nil {
			return err
		}
	}
	if !format.Tags() {
		return nil
	}
	if err := signer.Manifest(ctx, reg, ref, nil); err != nil {
		return err
	}
	for _, at := range atts {
		if err := signer.Attest(ctx, reg, ref, at.predicateType, at.data); err != nil {
			return err
		}
	}
	return nil
}

// signWithBundles signs a subject with Sigstore bundles: a bundle referrer per
// artifact and one per attestation, each listed in the lock.
func (r *run) signWithBundles(ctx context.Context, reg sign.Registry, signer *sign.Signer, a release.Artifact, ref name.Digest, atts []attestation) error {
	subject, err := subjectOf(a)
	if err != nil {
		return err
	}
	desc, ann, err := signer.BundleReferrer(ctx, reg, ref, subject, sign.PredicateCosignSign, nil)
	if err != nil {
		return err
	}
	r.lock.Artifacts = append(r.lock.Artifacts, release.Artifact{Kind: release.KindSignature, Name: a.Name, Variant: a.Variant,
		Platform: a.Platform, Repository: a.Repository, Digest: desc.Digest.String(), Size: desc.Size, MediaType: string(desc.MediaType),
		ArtifactType: release.BundleMediaType, Subject: a.Digest, Annotations: ann})
	for _, at := range atts {
		if err := r.bundleAttestation(ctx, reg, signer, a, ref, at); err != nil {
			return err
		}
	}
	return nil
}

func subjectOf(a release.Artifact) (v1.Descriptor, error) {
	h, err := v1.NewHash(a.Digest)
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: types.MediaType(a.MediaType), Digest: h, Size: a.Size}, nil
}

// bundleAttestation attaches one attestation as a Sigstore bundle referrer
// and lists it in the lock with its predicate type.
func (r *run) bundleAttestation(ctx context.Context, reg sign.Registry, signer *sign.Signer, a release.Artifact, ref name.Digest, at attestation) error {
	subject, err := subjectOf(a)
	if err != nil {
		return err
	}
	desc, ann, err := signer.BundleReferrer(ctx, reg, ref, subject, at.predicateType, at.data)
	if err != nil {
		return err
	}
	r.lock.Artifacts = append(r.lock.Artifacts, release.Artifact{Kind: release.KindAttestation, Name: a.Name, Variant: a.Variant,
		Platform: a.Platform, Repository: a.Repository, Digest: desc.Digest.String(), Size: desc.Size, MediaType: string(desc.MediaType),
		ArtifactType: release.BundleMediaType, PredicateType: at.predicateType, Subject: a.Digest, Annotations: ann})
	return nil
}

// attestation is one predicate to attest about an artifact.
type attestation struct {
	predicateType string
	data          []byte
}

// attestationsOf is what is attested about a: its SBOMs and provenance,
// the OpenVEX document, and on an index the signed review.
func (r *run) attestationsOf(a release.Artifact) ([]attestation, error) {
	var out []attestation
	for _, s := range r.sbomsOf(a) {
		doc, err := r.sbomData(s)
		if err != nil {
			return nil, err
		}
		out = append(out, attestation{s.PredicateType, doc})
	}
	if a.Kind == release.KindImage || a.Kind == release.KindImageIndex {
		if prov := r.provenance[a.Digest]; prov != nil {
			out = append(out, attestation{provenance.PredicateType, prov})
		}
		if r.vex != nil {
			out = append(out, attestation{PredicateOpenVEX, r.vex})
		}
	}
	// The review is of the whole release: it is attested on each index,
	// the digest a reviewer approves and a pod names.
	if a.Kind == release.KindImageIndex && r.signedReview != nil {
		out = append(out, attestation{review.PredicateType, r.signedReview.predicate})
	}
	return out, nil
}

// sbomsOf is the SBOMs attested about a. A platform image carries its own.
// An index carries those of its platform images too: admission controllers
// (policy-controller, Kyverno) check attestations on the digest a pod names,
// and a digest-pinned install names the index.
func (r *run) sbomsOf(a release.Artifact) []release.Artifact {
	var subjects map[string]bool
	switch a.Kind {
	case release.KindImage:
		subjects = map[string]bool{a.Digest: true}
	case release.KindImageIndex:
		subjects = map[string]bool{}
		for _, img := range r.lock.Artifacts {
			if img.Kind == release.KindImage && img.Name == a.Name && img.Variant == a.Variant {
				subjects[img.Digest] = true
			}
		}
	default:
		return nil
	}
	var out []release.Artifact
	for _, s := range r.lock.Artifacts {
		if s.Kind == release.KindSBOM && subjects[s.Subject] {
			out = append(out, s)
		}
	}
	return out
}

func (r *run) sbomData(s release.Artifact) ([]byte, error) {
	if bi := r.imageByDigest[s.Subject]; bi != nil {
		for _, d := range bi.docs {
			if predicateFor(d.MediaType) == s.PredicateType {
				return d.Data, nil
			}
		}
	}
	return nil, fmt.Errorf("no SBOM document for %s", s.Digest)
}

// certificateMargin is how much validity a keyless signer's certificate
// must have left before it signs the next subject or the lock. Fulcio's
// certificates last ten minutes, as cosign's do; signing every subject of a
// release with its SBOM attestations, each timestamped and pushed, can take
// longer on a slow registry or a busy runner, and a signature timestamped
// after its certificate expired never verifies. One subject's signatures
// take seconds, so three minutes leaves room.
const certificateMargin = 3 * time.Minute

// currentSigner is the release's signer, obtained on first use and again,
// with a fresh certificate, whenever a keyless one's is within
// certificateMargin of expiring. The new certificate must name the same
// identity: the lock, and the review signed with the release, name one.
func (r *run) currentSigner(ctx context.Context) (*sign.Signer, error) {
	s := r.opts.Signer
	if s != nil && (!s.Keyless() || r.opts.NewSigner == nil || time.Until(s.NotAfter()) > certificateMargin) {
		return s, nil
	}
	renewed, err := r.opts.NewSigner(ctx)
	if err != nil {
		if s != nil {
			return nil, fmt.Errorf("renewing the signer's certificate (it expires at %s): %w", s.NotAfter().UTC().Format(time.RFC3339), err)
		}
		return nil, fmt.Errorf("obtaining the signer: %w", err)
	}
	if s != nil && renewed.Identity() != s.Identity() {
		was, now := s.Identity(), renewed.Identity()
		return nil, fmt.Errorf("renewing the signer's certificate: the new one names %s (issuer %s), the release is signed by %s (issuer %s)", now.Identity, now.Issuer, was.Identity, was.Issuer)
	}
	r.opts.Signer = renewed
	return renewed, nil
}

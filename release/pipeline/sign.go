package pipeline

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/sign"
)

func (r *run) sign(ctx context.Context) error {
	if r.opts.Signer == nil {
		s, err := r.opts.NewSigner(ctx)
		if err != nil {
			return fmt.Errorf("obtaining the signer: %w", err)
		}
		r.opts.Signer = s
	}
	signer := r.opts.Signer
	r.lock.Signer = signer.Identity()
	reg := sign.Registry{Remote: r.ropts}
	var subjects []release.Artifact
	for _, a := range r.lock.Artifacts {
		switch a.Kind {
		case release.KindImageIndex, release.KindImage, release.KindSBOM, release.KindChart:
			subjects = append(subjects, a)
		}
	}
	for _, a := range subjects {
		ref, err := name.NewDigest(a.Repository + "@" + a.Digest)
		if err != nil {
			return err
		}
		sboms := r.sbomsOf(a)
		if signer.Keyless() {
			if err := r.signWithBundles(ctx, reg, signer, a, ref, sboms); err != nil {
				return err
			}
			continue
		}
		if err := signer.Manifest(ctx, reg, ref, nil); err != nil {
			return err
		}
		for _, s := range sboms {
			doc, err := r.sbomData(s)
			if err != nil {
				return err
			}
			if err := signer.Attest(ctx, reg, ref, s.PredicateType, doc); err != nil {
				return err
			}
		}
	}
	if !signer.Keyless() {
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
			if len(r.sbomsOf(a)) > 0 {
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

// signWithBundles signs a keyless release: a Sigstore bundle referrer per
// artifact and one per SBOM attestation, each listed in the lock.
func (r *run) signWithBundles(ctx context.Context, reg sign.Registry, signer *sign.Signer, a release.Artifact, ref name.Digest, sboms []release.Artifact) error {
	h, err := v1.NewHash(a.Digest)
	if err != nil {
		return err
	}
	subject := v1.Descriptor{MediaType: types.MediaType(a.MediaType), Digest: h, Size: a.Size}
	desc, ann, err := signer.BundleReferrer(ctx, reg, ref, subject, sign.PredicateCosignSign, nil)
	if err != nil {
		return err
	}
	r.lock.Artifacts = append(r.lock.Artifacts, release.Artifact{Kind: release.KindSignature, Name: a.Name, Variant: a.Variant,
		Platform: a.Platform, Repository: a.Repository, Digest: desc.Digest.String(), Size: desc.Size, MediaType: string(desc.MediaType),
		ArtifactType: release.BundleMediaType, Subject: a.Digest, Annotations: ann})
	for _, s := range sboms {
		doc, err := r.sbomData(s)
		if err != nil {
			return err
		}
		desc, ann, err := signer.BundleReferrer(ctx, reg, ref, subject, s.PredicateType, doc)
		if err != nil {
			return err
		}
		r.lock.Artifacts = append(r.lock.Artifacts, release.Artifact{Kind: release.KindAttestation, Name: a.Name, Variant: a.Variant,
			Platform: a.Platform, Repository: a.Repository, Digest: desc.Digest.String(), Size: desc.Size, MediaType: string(desc.MediaType),
			ArtifactType: release.BundleMediaType, PredicateType: s.PredicateType, Subject: a.Digest, Annotations: ann})
	}
	return nil
}

func (r *run) sbomsOf(a release.Artifact) []release.Artifact {
	if a.Kind != release.KindImage {
		return nil
	}
	var out []release.Artifact
	for _, s := range r.lock.Artifacts {
		if s.Kind == release.KindSBOM && s.Subject == a.Digest {
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

package pipeline

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/release"
)

// push uploads every index (and through it every image) by digest only,
// after the gate passed on the local layout; tags come last, after the
// whole release verified.
func (r *run) push(ctx context.Context) error {
	for _, bi := range r.indexes {
		ref, err := name.NewDigest(bi.repo + "@" + bi.digest.String())
		if err != nil {
			return err
		}
		if err := remote.WriteIndex(ref, bi.idx, r.ropts...); err != nil {
			return fmt.Errorf("pushing %s: %w", ref, err)
		}
		if err := r.addLockEntry(release.Artifact{Kind: release.KindImageIndex, Name: bi.name, Variant: bi.variant,
			Repository: bi.repo, Tag: r.opts.Version, Annotations: r.meta(bi.name).Annotations()}, ref); err != nil {
			return err
		}
	}
	for _, bi := range r.images {
		ref, err := name.NewDigest(bi.repo + "@" + bi.digest.String())
		if err != nil {
			return err
		}
		if err := r.addLockEntry(release.Artifact{Kind: release.KindImage, Name: bi.name, Variant: bi.variant,
			Platform: bi.platform.String(), Repository: bi.repo}, ref); err != nil {
			return err
		}
	}
	return nil
}

// addLockEntry completes a with what the registry reports for ref.
func (r *run) addLockEntry(a release.Artifact, ref name.Reference) error {
	desc, err := remote.Get(ref, r.ropts...)
	if err != nil {
		return fmt.Errorf("reading back %s: %w", ref, err)
	}
	a.Digest, a.Size, a.MediaType = desc.Digest.String(), desc.Size, string(desc.MediaType)
	r.lock.Artifacts = append(r.lock.Artifacts, a)
	return nil
}

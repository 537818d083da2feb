package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/google/go-containerregistry/pkg/name"

	"github.com/reloader-dev/reloader/publish/internal/artifact"
	"github.com/reloader-dev/reloader/release"
)

func (r *run) writeLock(ctx context.Context) error {
	sort.Slice(r.lock.Artifacts, func(i, j int) bool { return r.lock.Artifacts[i].Key() < r.lock.Artifacts[j].Key() })
	if err := r.lock.Validate(); err != nil {
		return err
	}
	data, err := r.lock.Marshal()
	if err != nil {
		return err
	}
	signer, err := r.currentSigner(ctx)
	if err != nil {
		return err
	}
	bundle, err := signer.Blob(ctx, data)
	if err != nil {
		return fmt.Errorf("signing the lock: %w", err)
	}
	r.res.LockPath = filepath.Join(r.opts.OutDir, release.LockFileName)
	r.res.BundlePath = r.res.LockPath + ".sigstore.json"
	if err := os.WriteFile(r.res.LockPath, data, 0o644); err != nil {
		return fmt.Errorf("writing the lock: %w", err)
	}
	if err := os.WriteFile(r.res.BundlePath, bundle, 0o644); err != nil {
		return fmt.Errorf("writing the lock bundle: %w", err)
	}
	// The lock also travels as an OCI artifact next to the images, where
	// reloader-mirror --lock-ref finds it: empty config, lock and bundle.
	repo, err := name.NewRepository(r.opts.Registry + "/" + release.LockRepository)
	if err != nil {
		return err
	}
	art := artifact.Artifact{ArtifactType: release.LockArtifactType, Layers: []artifact.Blob{
		{MediaType: release.LockArtifactType, Data: data}, {MediaType: release.BundleMediaType, Data: bundle}}}
	desc, err := art.Push(ctx, repo, "", r.ropts...)
	if err != nil {
		return fmt.Errorf("publishing the lock: %w", err)
	}
	r.lockArtifact = repo.Digest(desc.Digest.String())
	return nil
}

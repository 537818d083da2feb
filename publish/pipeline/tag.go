package pipeline

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/release"
)

// tag publishes the version tags of the indexes, the charts and the lock,
// last: only a verified release becomes pullable by version.
func (r *run) tag(ctx context.Context) error {
	type tagging struct {
		ref name.Digest
		tag string
	}
	todo := []tagging{{r.lockArtifact, r.opts.Version}}
	for _, a := range r.lock.Artifacts {
		if (a.Kind == release.KindImageIndex || a.Kind == release.KindChart) && a.Tag != "" {
			ref, err := name.NewDigest(a.Repository + "@" + a.Digest)
			if err != nil {
				return err
			}
			todo = append(todo, tagging{ref, a.Tag})
		}
	}
	for _, t := range todo {
		desc, err := remote.Get(t.ref, r.ropts...)
		if err != nil {
			return fmt.Errorf("tagging %s: %w", t.ref, err)
		}
		tag := t.ref.Repository.Tag(t.tag)
		if err := remote.Tag(tag, desc, r.ropts...); err != nil {
			return fmt.Errorf("tagging %s: %w", tag, err)
		}
	}
	r.res.LockRef = r.lockArtifact.Repository.Tag(r.opts.Version).String()
	return nil
}

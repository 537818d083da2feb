package mirror

import (
	"context"
	"fmt"

	"github.com/reloader-dev/reloader/release"
)

// graphContent lets package verify read a release through a Graph (whose
// manifests are already digest-checked) and its Source.
type graphContent struct {
	g   *Graph
	src Source
	// blobs are signature layers read ahead (newGraphContent), by
	// repository@digest, each complete and digest-checked.
	blobs map[string][]byte
}

func (c graphContent) Manifest(_ context.Context, a release.Artifact) ([]byte, error) {
	n := c.g.Node(a.Repository, a.Digest)
	if n == nil {
		return nil, fmt.Errorf("manifest %s@%s is not part of the release", a.Repository, a.Digest)
	}
	return n.Raw, nil
}

// Parallel lets the Verifier check as many signatures at once as the source
// may be read at once: the layers are read ahead, and the Source is safe for
// concurrent use (blobs are copied concurrently from it too).
func (c graphContent) Parallel() int { return parallelReads(c.src) }

func (c graphContent) SmallBlob(ctx context.Context, a release.Artifact, digest string, max int64) ([]byte, error) {
	b, ok := c.blobs[a.Repository+"@"+digest]
	if !ok {
		var err error
		if b, err = readSmallBlob(ctx, c.src, a.Repository, digest, max); err != nil {
			return nil, err
		}
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("blob %s@%s is larger than the %d bytes a signature may be", a.Repository, digest, max)
	}
	return b, nil
}

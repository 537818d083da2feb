package mirror

import (
	"context"
	"fmt"
	"io"

	"github.com/reloader-dev/reloader/release"
)

// Document reads the document layer (the layer of the artifact's own type)
// of a non-image artifact of the verified release, an SBOM for example,
// from where the release was verified. Its manifest was checked against the
// lock's digest when the release was verified; the layer is checked against
// its digest as it is read, and one larger than max is refused unread.
func (r *Verified) Document(ctx context.Context, a release.Artifact, max int64) ([]byte, error) {
	n := r.Graph.Node(a.Repository, a.Digest)
	if n == nil {
		return nil, fmt.Errorf("%s %s@%s is not in the release graph", a.Kind, a.Repository, a.Digest)
	}
	for _, b := range n.Blobs {
		if b.MediaType != a.ArtifactType {
			continue
		}
		if b.Size > max {
			return nil, fmt.Errorf("%s %s@%s: layer of %d bytes, more than the %d accepted", a.Kind, a.Repository, a.Digest, b.Size, max)
		}
		rc, _, err := r.src.Blob(ctx, a.Repository, b.Digest)
		if err != nil {
			return nil, fmt.Errorf("reading %s %s@%s: %w", a.Kind, a.Repository, b.Digest, err)
		}
		defer rc.Close()
		data, err := io.ReadAll(NewVerifyingReader(rc, b.Digest, b.Size))
		if err != nil {
			return nil, fmt.Errorf("reading %s %s@%s: %w", a.Kind, a.Repository, b.Digest, err)
		}
		return data, nil
	}
	return nil, fmt.Errorf("%s %s@%s has no %s layer", a.Kind, a.Repository, a.Digest, a.ArtifactType)
}

package releasetest

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// PlatformImage reads the platform image of an index by digest
// (repository@sha256:...), as a user pulling it would get it.
func PlatformImage(ctx context.Context, indexRef string, p v1.Platform, ropts ...remote.Option) (v1.Image, error) {
	ref, err := name.NewDigest(indexRef)
	if err != nil {
		return nil, err
	}
	idx, err := remote.Index(ref, append([]remote.Option{remote.WithContext(ctx)}, ropts...)...)
	if err != nil {
		return nil, fmt.Errorf("reading the index %s: %w", ref, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("reading the index %s: %w", ref, err)
	}
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.Equals(p) {
			return idx.Image(d.Digest)
		}
	}
	return nil, fmt.Errorf("the index %s has no %s image", ref, p.String())
}

// ImageFile is the content of the regular file at file in img's
// flattened file system, as a container of the image sees it.
func ImageFile(img v1.Image, file string) ([]byte, error) {
	rc := mutate.Extract(img)
	defer rc.Close()
	want := strings.TrimPrefix(path.Clean(file), "/")
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("the image holds no file %s", file)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the image for %s: %w", file, err)
		}
		if h.Typeflag == tar.TypeReg && strings.TrimPrefix(path.Clean(h.Name), "/") == want {
			return io.ReadAll(tr)
		}
	}
}

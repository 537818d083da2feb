package releasetest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/reloader-dev/reloader/publish/local"
)

// maxPadLayer bounds one padding layer, so a large release has many blobs
// to move, as a real base image does, rather than one huge one.
const maxPadLayer = 64 << 20

// pushBase publishes the stand-in UBI base, padded with padBytes of
// random data when padBytes > 0, and returns its name@digest.
func pushBase(ctx context.Context, repo string, created time.Time, seed uint64, padBytes int64, ropts ...remote.Option) (string, error) {
	if padBytes <= 0 {
		return local.PushStandInBase(ctx, repo, created, ropts...)
	}
	idx, err := local.StandInBase(ctx, created)
	if err != nil {
		return "", err
	}
	padded, err := padIndex(idx, created, seed, padBytes)
	if err != nil {
		return "", fmt.Errorf("padding the stand-in base: %w", err)
	}
	d, err := padded.Digest()
	if err != nil {
		return "", err
	}
	ref, err := name.NewDigest(repo + "@" + d.String())
	if err != nil {
		return "", err
	}
	if err := remote.WriteIndex(ref, padded, ropts...); err != nil {
		return "", fmt.Errorf("pushing the padded stand-in base to %s: %w", repo, err)
	}
	return ref.String(), nil
}

// padIndex appends padding layers to every platform image of idx, the
// bytes split evenly between the platforms.
func padIndex(idx v1.ImageIndex, created time.Time, seed uint64, padBytes int64) (v1.ImageIndex, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	out := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	perImage := padBytes / int64(len(im.Manifests))
	for i, desc := range im.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			return nil, err
		}
		var adds []mutate.Addendum
		for n, left := 0, perImage; left > 0; n, left = n+1, left-maxPadLayer {
			l, err := padLayer(rand.NewChaCha8(padSeed(seed, i, n)), fmt.Sprintf("usr/share/padding/%03d", n), min(left, maxPadLayer), created)
			if err != nil {
				return nil, err
			}
			adds = append(adds, mutate.Addendum{Layer: l, MediaType: types.OCILayer,
				History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "stand-in base padding"}})
		}
		if img, err = mutate.Append(img, adds...); err != nil {
			return nil, err
		}
		out = mutate.AppendManifests(out, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: desc.Platform}})
	}
	return out, nil
}

func padSeed(seed uint64, image, layer int) [32]byte {
	var s [32]byte
	copy(s[:], fmt.Sprintf("%d/%d/%d", seed, image, layer))
	return s
}

// padLayer is a gzip layer holding one file of size random bytes. Random
// data does not compress, so it is stored, not deflated: building a GiB
// takes seconds, and the blob is as large as the data.
func padLayer(r io.Reader, file string, size int64, created time.Time) (v1.Layer, error) {
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.NoCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	hdr := &tar.Header{Name: file, Mode: 0o644, Size: size, ModTime: created, Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := io.CopyN(tw, r, size); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	data := gz.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
}

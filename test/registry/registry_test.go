package registry_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/test/registry"
)

// Both registries accept an image and give back the same bytes by digest; only
// the in-process one answers the referrers API.
func TestRegistriesRoundTripByDigest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	inproc, err := registry.StartInProcess(registry.InProcessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inproc.Stop() })
	dist, err := registry.StartDistribution(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dist.Stop() })

	for _, r := range []*registry.Registry{inproc, dist} {
		t.Run(r.Host, func(t *testing.T) {
			img, err := random.Image(1024, 2)
			if err != nil {
				t.Fatal(err)
			}
			want, err := img.Digest()
			if err != nil {
				t.Fatal(err)
			}
			tag, err := name.NewTag(r.Host+"/smoke/image:v1", name.Insecure)
			if err != nil {
				t.Fatal(err)
			}
			if err := remote.Write(tag, img, remote.WithContext(ctx)); err != nil {
				t.Fatalf("push to %s: %v", tag, err)
			}
			ref := tag.Context().Digest(want.String())
			got, err := remote.Image(ref, remote.WithContext(ctx))
			if err != nil {
				t.Fatalf("pull %s: %v", ref, err)
			}
			gotDigest, err := got.Digest()
			if err != nil {
				t.Fatal(err)
			}
			if gotDigest != want {
				t.Fatalf("pulled %s by digest, got %s", want, gotDigest)
			}
			layers, err := got.Layers()
			if err != nil || len(layers) != 2 {
				t.Fatalf("pulled image has %d layers (%v), want 2", len(layers), err)
			}

			_, err = remote.Referrers(ref, remote.WithContext(ctx))
			if r.Referrers && err != nil {
				t.Fatalf("referrers API of %s: %v", r.Host, err)
			}
		})
	}
}

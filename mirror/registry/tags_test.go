package registry_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/reloader-dev/reloader/mirror/registry"
	testregistry "github.com/reloader-dev/reloader/test/registry"
)

// pushTags stores one small manifest under each tag.
func pushTags(ctx context.Context, t *testing.T, r *registry.Repository, tags ...string) {
	t.Helper()
	cfg := []byte("{}")
	if err := r.PushBlob(ctx, registry.Digest(cfg), int64(len(cfg)), bytes.NewReader(cfg)); err != nil {
		t.Fatal(err)
	}
	m := []byte(`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":"` +
		registry.Digest(cfg) + `","size":2},"layers":[]}`)
	for _, tag := range tags {
		if _, err := r.PutManifest(ctx, tag, "application/vnd.oci.image.manifest.v1+json", m); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTagsAreListedAcrossPagesEvenWithoutALinkHeader(t *testing.T) {
	reg := testregistry.InProcess(t)
	c, err := registry.New(registry.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx := context.Background()
	r, err := c.Repository(ctx, reg.Host+"/team/reloader-release", true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"latest", "v1.0.0", "v1.10.0", "v1.2.0", "v2.0.0-rc.1"}
	pushTags(ctx, t, r, want...)
	got, err := registry.TagsPaged(ctx, r, 2)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("tags listed two at a time: %v, want %v", got, want)
	}

	none, err := c.Repository(ctx, reg.Host+"/team/never-pushed", false)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := none.Tags(ctx); err != nil || len(got) != 0 {
		t.Fatalf("tags of a repository the registry does not know: %v, %v; want none and no error", got, err)
	}
}

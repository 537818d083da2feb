package mirror_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/mirror"
)

func TestReleasesAtListsTheTargetsReleaseVersionsNewestFirst(t *testing.T) {
	reg := startInProcess(t, nil)
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	repo := reg.Host + "/mirror/reloader-release"
	for _, tag := range []string{"v1.2.0", "latest", "v1.10.0", "sha256-0123.sig", "v1.9.0-rc.1", "1.11.0", "v1.9.0"} {
		ref, err := name.NewTag(repo+":"+tag, name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img); err != nil {
			t.Fatal(err)
		}
	}
	got, err := mirror.ReleasesAt(context.Background(), newClient(t), repo)
	if err != nil {
		t.Fatal(err)
	}
	// "1.11.0" is no release tag: the pipeline tags locks with the "v".
	if want := []string{"v1.10.0", "v1.9.0", "v1.9.0-rc.1", "v1.2.0"}; !slices.Equal(got, want) {
		t.Fatalf("releases at the target: %v, want %v", got, want)
	}
	none, err := mirror.ReleasesAt(context.Background(), newClient(t), reg.Host+"/empty/reloader-release")
	if err != nil || len(none) != 0 {
		t.Fatalf("releases at an empty target: %v, %v; want none", none, err)
	}
}

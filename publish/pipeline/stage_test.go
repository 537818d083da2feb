package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/test/registry"
	"github.com/reloader-dev/reloader/test/tools"
)

// The signing stage takes nothing from the build stage but the digests it
// reported and content that hashes to them: a layout with one changed
// layer, an index the build did not report, a build of another version or
// an index of another name stop the release before anything is pushed; the
// untouched layout is released with exactly the reported digests.
func TestPublishFromABuildStageTakesOnlyContentThatHashesToItsDigests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the controller")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	reg := registry.InProcess(t)
	opts := func(version string) pipeline.Options {
		return pipeline.Options{Version: version, Commit: strings.Repeat("ab", 20), Source: "https://github.com/reloader-dev/reloader",
			Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Now: time.Now(), ModuleDir: "../..", MainPackage: "./cmd/reloader",
			Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}}, Registry: reg.Host + "/reloader-dev", StandardName: "reloader",
			SupportFile: releasetest.SupportTableFile(t, version)}
	}
	bo := opts("v1.2.3")
	bo.OutDir = t.TempDir()
	rec, err := pipeline.Build(ctx, bo)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Indexes) != 2 || rec.Indexes[0].Name != "reloader" || rec.Indexes[1].Name != "reloader-fips" {
		t.Fatalf("build record %+v, want the standard and the fips index", rec)
	}
	run := func(t *testing.T, version, fromBuild string, built pipeline.BuildRecord) (*pipeline.Result, error) {
		o := opts(version)
		o.OutDir, o.FromBuild, o.Built, o.NoScan, o.Signer = t.TempDir(), fromBuild, &built, true, newSigner(t)
		return pipeline.Run(ctx, o)
	}
	changedLayer := copyLayout(t, bo.OutDir)
	corruptLayer(t, changedLayer, rec.Indexes[0].Digest)
	other := *rec
	other.Indexes = []pipeline.BuiltIndex{{Name: "reloader", Digest: "sha256:" + strings.Repeat("0", 64)}, rec.Indexes[1]}
	renamed := *rec
	renamed.Indexes = []pipeline.BuiltIndex{{Name: "reloader-extra", Digest: rec.Indexes[0].Digest}, rec.Indexes[1]}
	short := *rec
	short.Indexes = rec.Indexes[:1]
	for _, c := range []struct {
		name, version, dir string
		built              pipeline.BuildRecord
		says               string
	}{
		{"a changed layer", "v1.2.3", changedLayer, *rec, "content does not match its digests"},
		{"an index the build did not report", "v1.2.3", bo.OutDir, other, "not in the layout"},
		{"a build of another version", "v1.2.4", bo.OutDir, *rec, `built as version "v1.2.3"`},
		{"an index of another name", "v1.2.3", bo.OutDir, renamed, "not one of this release's"},
		{"a variant the build did not report", "v1.2.3", bo.OutDir, short, "the build reports no reloader-fips index"},
	} {
		t.Run("refused before anything is pushed: "+c.name, func(t *testing.T) {
			_, err := run(t, c.version, c.dir, c.built)
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("release: %v, want an error saying %q", err, c.says)
			}
			host, _ := name.NewRegistry(reg.Host)
			if repos, err := remote.Catalog(ctx, host); err != nil || len(repos) != 0 {
				t.Fatalf("the registry holds %v (%v) after a refused release", repos, err)
			}
		})
	}
	t.Run("the untouched layout is released under the reported digests", func(t *testing.T) {
		res, err := run(t, "v1.2.3", bo.OutDir, *rec)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Lock.Find(release.KindImageIndex, "reloader"); len(got) != 1 || got[0].Digest != rec.Indexes[0].Digest {
			t.Fatalf("the lock lists %+v, want the index %s", got, rec.Indexes[0].Digest)
		}
	})
}

func newSigner(t *testing.T) *sign.Signer {
	t.Helper()
	priv, _, err := sign.GenerateKey(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sign.FromKey(sign.KeyOptions{PrivateKeyPath: priv})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// copyLayout copies a build stage's output directory (its OCI layout).
func copyLayout(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "build")
	if err := os.CopyFS(filepath.Join(dst, "oci"), os.DirFS(filepath.Join(dir, "oci"))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// corruptLayer overwrites the first layer of the index's first image with
// other bytes of the same length, as a tampered artifact store would.
func corruptLayer(t *testing.T, dir, index string) {
	t.Helper()
	p, err := layout.FromPath(filepath.Join(dir, "oci"))
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	h, _ := v1.NewHash(index)
	idx, err := top.ImageIndex(h)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	blob := filepath.Join(dir, "oci", "blobs", "sha256", m.Layers[0].Digest.Hex)
	data, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	if err := os.WriteFile(blob, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

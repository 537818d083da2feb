package mirror_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// BenchmarkImportVersusCrane is the disconnected side: the release exported
// once as an OCI layout (what `reloader-mirror export` writes), then
// `reloader-mirror import` (open, verify, push, verify at the target) against
// pushing every artifact of the same layout with go-containerregistry's
// remote.Write/WriteIndex (what `crane push` does) and with `regctl image
// copy ocidir://`, at the same concurrency, order rotating; then a re-run of
// the import and of the crane push into the complete target.
func BenchmarkImportVersusCrane(b *testing.B) {
	for _, c := range cases() {
		b.Run(c.name, func(b *testing.B) { benchImport(b, c) })
	}
}

func benchImport(b *testing.B, c benchCase) {
	bn := newBench(b, c)
	cl, _ := registry.New(registry.Options{})
	defer cl.Close()
	dir := filepath.Join(b.TempDir(), "layout")
	v, err := trust.NewVerifier(trust.Policy{PublicKey: bn.pub})
	if err != nil {
		b.Fatal(err)
	}
	rel, err := mirror.Verify(bn.ctx, &mirror.RegistrySource{Client: cl}, bn.rel.LockJSON, bn.rel.LockBundle, v)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := rel.Export(bn.ctx, mirror.ExportOptions{Path: dir, Concurrency: *concurrency}); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		r := &runs{imported: true}
		contestants := []func(*testing.B, *runs){
			func(b *testing.B, r *runs) { bn.runImport(b, r, dir) },
			func(b *testing.B, r *runs) { bn.runLayoutPush(b, r, dir) },
			func(b *testing.B, r *runs) { bn.runRegctlLayout(b, r, dir) },
			func(b *testing.B, r *runs) { bn.sha256sumFloor(b, r, dir) },
		}
		for rep := range c.reps {
			for i := range contestants {
				contestants[(rep+i)%len(contestants)](b, r)
			}
		}
		report(b, c, r)
	}
}

// importRelease is what reloader-mirror import does.
func (bn *bench) importRelease(dir, workDir string) func(*registry.Client, mirror.PushOptions) (*mirror.Receipt, error) {
	return func(_ *registry.Client, opts mirror.PushOptions) (*mirror.Receipt, error) {
		a, err := mirror.OpenArchive(bn.ctx, []string{dir}, workDir, mirror.ArchiveLimits{})
		if err != nil {
			return nil, err
		}
		defer a.Close()
		v, err := trust.NewVerifier(trust.Policy{PublicKey: bn.pub})
		if err != nil {
			return nil, err
		}
		rel, err := mirror.VerifyToPush(bn.ctx, a.Layout, a.LockJSON, a.LockBundle, v, opts)
		if err != nil {
			return nil, err
		}
		return rel.Push(bn.ctx, opts)
	}
}

func (bn *bench) runImport(b *testing.B, r *runs, dir string) {
	bn.runTwice(b, r, bn.importRelease(dir, b.TempDir()))
}

// runLayoutPush pushes every artifact of the lock from the layout, an index
// with WriteIndex and a manifest with Write, as crane push does.
func (bn *bench) runLayoutPush(b *testing.B, r *runs, dir string) {
	p, err := layout.FromPath(dir)
	if err != nil {
		b.Fatal(err)
	}
	root, err := p.ImageIndex()
	if err != nil {
		b.Fatal(err)
	}
	bn.everyArtifactTwice(b, r, func(a release.Artifact, target string) error {
		ref, err := name.ParseReference(target)
		if err != nil {
			return err
		}
		h, err := v1.NewHash(a.Digest)
		if err != nil {
			return err
		}
		opts := []remote.Option{remote.WithContext(bn.ctx), remote.WithJobs(*concurrency)}
		if types.MediaType(a.MediaType).IsIndex() {
			idx, err := root.ImageIndex(h)
			if err != nil {
				return err
			}
			return remote.WriteIndex(ref, idx, opts...)
		}
		img, err := root.Image(h)
		if err != nil {
			return err
		}
		return remote.Write(ref, img, opts...)
	})
}

func (bn *bench) runRegctlLayout(b *testing.B, r *runs, dir string) {
	bn.regctlCopy(b, r, func(a release.Artifact) string { return "ocidir://" + dir + "@" + a.Digest })
}

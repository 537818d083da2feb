package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/reloader-dev/reloader/internal/image"
	"github.com/reloader-dev/reloader/release"
)

// A release runs in two stages, as SLSA's isolated provenance asks: Build
// compiles and assembles the images and hands on nothing but an OCI layout
// and the digests of its indexes; Run, in a job that alone may sign, takes
// exactly those digests, checks every byte of the layout against them, and
// only then generates the SBOMs and provenance, gates, pushes, signs and
// publishes. The build job never holds a signing identity, and the signing
// job runs no build: in the release workflow they are separate jobs on
// separate machines (.github/workflows/release.yml); locally Run calls
// Build itself and reads its layout back the same way.

// BuildRecord is the build stage's only output besides its layout: the
// indexes it built, each by digest. It is what the release workflow's
// build job passes to the signing job.
type BuildRecord struct {
	Indexes []BuiltIndex `json:"indexes"`
}

// BuiltIndex is one variant's image index.
type BuiltIndex struct {
	Variant string `json:"variant"`
	Name    string `json:"name"`
	Digest  string `json:"digest"`
}

// buildLayoutDir is where a build stage writes its layout, under its output
// directory.
const buildLayoutDir = "oci"

// Build runs the build stage into opts.OutDir: every platform's controller,
// every variant's images and indexes, written as an OCI layout (OutDir/oci)
// with build.json beside it. Nothing is signed, scanned or pushed, and no
// signer or scanner is needed.
func Build(ctx context.Context, opts Options) (*BuildRecord, error) {
	if err := opts.checkBuild(); err != nil {
		return nil, err
	}
	r := newRun(ctx, opts)
	for _, s := range []step{{"build images", (*run).buildImages}, {"write the OCI layout", (*run).writeLayout}} {
		fmt.Fprintf(r.log, "==> %s\n", s.name)
		if err := s.run(r, ctx); err != nil {
			return nil, fmt.Errorf("building %s: %s: %w", opts.Version, s.name, err)
		}
	}
	rec := &BuildRecord{}
	for _, ix := range r.indexes {
		rec.Indexes = append(rec.Indexes, BuiltIndex{Variant: ix.variant, Name: ix.name, Digest: ix.digest.String()})
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(opts.OutDir, "build.json"), append(data, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("writing the build record: %w", err)
	}
	return rec, nil
}

// ParseBuiltIndex reads NAME@sha256:HEX, as --expect-index gives it.
func ParseBuiltIndex(s string) (BuiltIndex, error) {
	nm, digest, ok := strings.Cut(s, "@")
	if _, err := v1.NewHash(digest); !ok || nm == "" || err != nil {
		return BuiltIndex{}, fmt.Errorf("index %q: want NAME@sha256:HEX, e.g. reloader@sha256:%s", s, strings.Repeat("0", 64))
	}
	return BuiltIndex{Name: nm, Digest: digest}, nil
}

// loadBuild takes the images the build stage made from its layout
// (Options.FromBuild), by the digests the build stage reported
// (Options.Built) and nothing else: each index must be in the layout under
// exactly its digest, and every manifest, config and layer below it must
// hash to what the index says (validate.Index reads them all). The
// variants and platforms come from this release's own options, never from
// the build's files.
func (r *run) loadBuild(context.Context) error {
	o := r.opts
	p, err := layout.FromPath(filepath.Join(o.FromBuild, buildLayoutDir))
	if err != nil {
		return fmt.Errorf("reading the build's OCI layout in %s: %w", o.FromBuild, err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		return fmt.Errorf("reading the build's OCI layout in %s: %w", o.FromBuild, err)
	}
	want := o.expectedIndexes()
	seen := map[string]bool{}
	for _, b := range o.Built.Indexes {
		variant, ok := want[b.Name]
		if !ok || seen[b.Name] {
			return fmt.Errorf("the build reports index %s, which is not one of this release's (%s) or is reported twice", b.Name, strings.Join(sortedKeys(want), ", "))
		}
		seen[b.Name] = true
		if err := r.loadIndex(top, variant, b); err != nil {
			return fmt.Errorf("the build's %s index %s: %w", b.Name, b.Digest, err)
		}
	}
	for nm := range want {
		if !seen[nm] {
			return fmt.Errorf("the build reports no %s index", nm)
		}
	}
	fmt.Fprintf(r.log, "    %d indexes and %d images from %s, every blob checked against its digest\n", len(r.indexes), len(r.images), o.FromBuild)
	return nil
}

func (r *run) loadIndex(top v1.ImageIndex, variant string, b BuiltIndex) error {
	h, err := v1.NewHash(b.Digest)
	if err != nil {
		return err
	}
	idx, err := top.ImageIndex(h)
	if err != nil {
		return fmt.Errorf("not in the layout: %w", err)
	}
	if got, err := idx.Digest(); err != nil || got != h {
		return fmt.Errorf("the layout holds another manifest under this digest (%v, %v)", got, err)
	}
	if err := validate.Index(idx); err != nil {
		return fmt.Errorf("content does not match its digests: %w", err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	if v, c := im.Annotations[image.AnnotationVersion], im.Annotations[image.AnnotationRevision]; v != r.opts.Version || c != r.opts.Commit {
		return fmt.Errorf("built as version %q at commit %q, but this release is %s at %s", v, c, r.opts.Version, r.opts.Commit)
	}
	for _, d := range im.Manifests {
		if d.Platform == nil {
			return fmt.Errorf("manifest %s names no platform", d.Digest)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return err
		}
		if err := r.addImage(variant, b.Name, *d.Platform, img); err != nil {
			return err
		}
	}
	r.indexes = append(r.indexes, &builtIndex{variant: variant, name: b.Name, repo: r.repo(b.Name), idx: idx, digest: h})
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checkBuild checks what the build stage needs.
func (o *Options) checkBuild() error {
	if err := errors.Join(o.buildProblems()...); err != nil {
		return fmt.Errorf("release options: %w", err)
	}
	return nil
}

func (o *Options) buildProblems() []error {
	var errs []error
	for k, v := range map[string]string{"version": o.Version, "commit": o.Commit, "source": o.Source, "registry": o.Registry,
		"main package": o.MainPackage, "output directory": o.OutDir, "standard image name": o.StandardName} {
		if v == "" {
			errs = append(errs, fmt.Errorf("no %s", k))
		}
	}
	if o.Version != "" {
		if err := release.CheckVersion(o.Version); err != nil {
			errs = append(errs, err)
		}
	}
	if o.Platforms != nil && len(only(StandardPlatforms(), o.Platforms)) == 0 {
		errs = append(errs, fmt.Errorf("none of the platforms asked for is one Reloader ships (%s)", platformList(StandardPlatforms())))
	}
	if o.Created.IsZero() {
		errs = append(errs, errors.New("no creation time (SOURCE_DATE_EPOCH)"))
	}
	if o.UBIBase != "" {
		if _, err := name.NewDigest(o.UBIBase); err != nil {
			errs = append(errs, fmt.Errorf("the UBI base must be pinned by digest (name@sha256:...): %w", err))
		}
		if o.UBIName == "" {
			errs = append(errs, errors.New("no UBI image name"))
		}
	}
	return errs
}

func newRun(ctx context.Context, opts Options) *run {
	r := &run{opts: opts, res: &Result{ImageSizes: map[string]int64{}}, log: opts.Log, imageByDigest: map[string]*builtImage{},
		ropts: append([]remote.Option{remote.WithContext(ctx)}, opts.Remote...)}
	if r.log == nil {
		r.log = io.Discard
	}
	return r
}

package pipeline

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reloader-dev/reloader/internal/image"
	"github.com/reloader-dev/reloader/release/build"
	"github.com/reloader-dev/reloader/release/provenance"
)

// generateProvenance writes the SLSA v1 provenance of every platform image
// and index. What the binary was built with is read back from the binary's
// own build information (toolchain, environment, every linked module with
// its go.sum hash), not from what the pipeline meant to pass; only the
// ldflags, which Go does not record under -trimpath, come from the build.
func (r *run) generateProvenance(context.Context) error {
	o := r.opts
	dir := filepath.Join(o.OutDir, "provenance")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	r.provenance, r.provSummaries = map[string][]byte{}, map[string]provenance.Summary{}
	builder := r.builderID()
	builds := map[string]provenance.Build{}
	for _, bi := range r.images {
		b, err := r.imageBuild(bi, builder)
		if err != nil {
			return err
		}
		builds[bi.digest.String()] = b
		if err := r.addProvenance(dir, bi.name+"-"+build.PlatformDir(bi.platform), bi.digest.String(), b); err != nil {
			return err
		}
	}
	for _, ix := range r.indexes {
		var b provenance.Build
		for _, bi := range r.images {
			if bi.name != ix.name {
				continue
			}
			pb := builds[bi.digest.String()]
			if b.BuilderID == "" {
				b = pb
				b.Platforms, b.BasePlatform = nil, nil
			}
			b.Platforms = append(b.Platforms, bi.platform.String())
			b.Images = append(b.Images, provenance.Image{Ref: bi.repo, Digest: bi.digest.String()})
		}
		if b.BuilderID == "" {
			return fmt.Errorf("provenance of %s: the index has no images", ix.name)
		}
		if err := r.addProvenance(dir, ix.name+"-index", ix.digest.String(), b); err != nil {
			return err
		}
	}
	fmt.Fprintf(r.log, "    builder %q, %d provenance documents in %s\n", builder, len(r.provenance), dir)
	return nil
}

// builderID is the workflow identity of a keyless release, or the local
// builder.
func (r *run) builderID() string {
	switch {
	case r.opts.BuilderID != "":
		return r.opts.BuilderID
	case r.opts.Signer != nil && r.opts.Signer.Keyless():
		return r.opts.Signer.Identity().Identity
	}
	return provenance.LocalBuilder
}

func (r *run) imageBuild(bi *builtImage, builder string) (provenance.Build, error) {
	o := r.opts
	info, err := buildinfo.ReadFile(bi.binary)
	if err != nil {
		return provenance.Build{}, fmt.Errorf("provenance of %s %s: reading the build information of %s: %w", bi.name, bi.platform.String(), bi.binary, err)
	}
	b := provenance.Build{BuilderID: builder, Source: o.Source, Commit: o.Commit, Version: o.Version, MainPackage: o.MainPackage,
		Variant: bi.variant, Platforms: []string{bi.platform.String()}, GoVersion: info.GoVersion, Env: map[string]string{},
		SourceDateEpoch: o.Created, LDFlags: build.LDFlags(build.Options{Version: o.Version, Commit: o.Commit, Date: o.Created, StampPackage: o.StampPackage})}
	// GOFIPS140 is among them in a -fips variant's binary, as the version
	// it resolved to: what a rebuild passes to reproduce it (rebuild.go).
	for _, s := range info.Settings {
		switch {
		case s.Key == "CGO_ENABLED" || strings.HasPrefix(s.Key, "GO"):
			b.Env[s.Key] = s.Value
		}
	}
	for _, d := range info.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		b.Modules = append(b.Modules, provenance.Module{Path: m.Path, Version: m.Version, Sum: m.Sum})
	}
	if bi.variant == VariantUBI || bi.variant == VariantUBIFIPS {
		m, err := bi.img.Manifest()
		if err != nil {
			return provenance.Build{}, err
		}
		ref, idx, _ := strings.Cut(o.UBIBase, "@")
		b.Base = &provenance.Image{Ref: ref, Digest: idx}
		b.BasePlatform = &provenance.Image{Ref: ref, Digest: m.Annotations[image.AnnotationBaseDigest]}
	}
	return b, nil
}

func (r *run) addProvenance(dir, file, subject string, b provenance.Build) error {
	pred, err := provenance.Predicate(b)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	r.provenance[subject] = pred
	r.provSummaries[subject] = provenance.Summary{Builder: b.BuilderID, Source: b.Source, Commit: b.Commit, GoVersion: b.GoVersion}
	if err := os.WriteFile(filepath.Join(dir, file+".slsa.json"), pred, 0o644); err != nil {
		return fmt.Errorf("writing provenance: %w", err)
	}
	return nil
}

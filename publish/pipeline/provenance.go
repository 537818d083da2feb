package pipeline

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"os"
	pathpkg "path"
	"path/filepath"
	"runtime/debug"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/reloader-dev/reloader/internal/image"
	"github.com/reloader-dev/reloader/publish/build"
	"github.com/reloader-dev/reloader/release/provenance"
)

// generateProvenance writes the SLSA v1 provenance of every platform image
// and index. What the binary was built with is read back from the binary's
// own build information (toolchain, environment, every linked module with
// its go.sum hash) inside the image, the very bytes the digest names, not
// from what the build stage meant to do or says it did; only the ldflags,
// which Go does not record under -trimpath, are the recipe's.
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
	info, err := binaryBuildInfo(bi.img, controllerPath)
	if err != nil {
		return provenance.Build{}, fmt.Errorf("provenance of %s %s %s: %w", bi.name, bi.platform.String(), bi.digest, err)
	}
	b := provenance.Build{BuilderID: builder, Source: o.Source, Commit: o.Commit, Version: o.Version, MainPackage: o.MainPackage,
		Variant: bi.variant, Platforms: []string{bi.platform.String()}, GoVersion: info.GoVersion, Env: map[string]string{},
		SourceDateEpoch: o.Created, LDFlags: build.LDFlags(build.Options{Version: o.Version, Commit: o.Commit, Date: o.Created, StampPackage: o.StampPackage}),
		Flags: build.FlagsOf(info.Settings)}
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

// controllerPath is where every variant ships the controller.
const controllerPath = "/reloader"

// maxBinaryBytes bounds the controller binary read from an image.
const maxBinaryBytes = 512 << 20

// binaryBuildInfo reads the Go build information of the file at path in
// img, searching the layers from the top, as the container would see it.
func binaryBuildInfo(img v1.Image, path string) (*debug.BuildInfo, error) {
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	for i := len(layers) - 1; i >= 0; i-- {
		data, err := fileInLayer(layers[i], path)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		if data == nil {
			continue
		}
		info, err := buildinfo.Read(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("reading the build information of %s: %w", path, err)
		}
		return info, nil
	}
	return nil, fmt.Errorf("the image has no %s", path)
}

// fileInLayer is the content of the regular file at path in l, or nil.
func fileInLayer(l v1.Layer, path string) ([]byte, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if pathpkg.Clean("/"+h.Name) != path || h.Typeflag != tar.TypeReg {
			continue
		}
		if h.Size > maxBinaryBytes {
			return nil, fmt.Errorf("%s is %d bytes, above %d", path, h.Size, maxBinaryBytes)
		}
		return io.ReadAll(io.LimitReader(tr, maxBinaryBytes))
	}
}

package pipeline

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/internal/image"
	"github.com/reloader-dev/reloader/publish/build"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/provenance"
	"github.com/reloader-dev/reloader/release/trust"
)

// RebuildOptions configures Rebuild.
type RebuildOptions struct {
	// Lock is the release to reproduce.
	Lock *release.Lock
	// ModuleDir is a checkout of the lock's commit.
	ModuleDir string
	// LicenseFiles are shipped under /licenses, as in the release.
	LicenseFiles []string
	// OutDir receives the binaries and the OCI layout (OutDir/oci).
	OutDir string
	Remote []remote.Option
	Log    io.Writer
}

// RebuiltImage is the verdict on one image or index of the lock.
type RebuiltImage struct {
	Kind      release.Kind `json:"kind"`
	Name      string       `json:"name"`
	Platform  string       `json:"platform,omitempty"`
	Locked    string       `json:"locked"`
	Rebuilt   string       `json:"rebuilt"`
	Identical bool         `json:"identical"`
	// Layer is the index of the first differing layer (-1: the config or
	// the manifest differs), File the first differing path in it.
	Layer       int    `json:"layer,omitempty"`
	LayerDigest string `json:"layerDigest,omitempty"`
	File        string `json:"file,omitempty"`
	Difference  string `json:"difference,omitempty"`
}

// RebuildReport is what Rebuild found.
type RebuildReport struct {
	Version   string         `json:"version"`
	Commit    string         `json:"commit"`
	GoVersion string         `json:"goVersion"`
	Layout    string         `json:"layout"`
	Images    []RebuiltImage `json:"images"`
	Seconds   float64        `json:"seconds"`
}

// Identical reports whether every image and index was reproduced.
func (r *RebuildReport) Identical() bool {
	for _, i := range r.Images {
		if !i.Identical {
			return false
		}
	}
	return len(r.Images) > 0
}

// Rebuild builds every platform image and index of the lock again from a
// checkout of its commit, with the toolchain its provenance names, into a
// local OCI layout, and compares digests with the lock. Nothing is pushed;
// the registry is read for the release's provenance, the locked images
// (to explain a difference) and the UBI base.
func Rebuild(ctx context.Context, o RebuildOptions) (*RebuildReport, error) {
	start := time.Now()
	l := o.Lock
	ropts := append([]remote.Option{remote.WithContext(ctx)}, o.Remote...)
	images, indexes := l.Find(release.KindImage, ""), l.Find(release.KindImageIndex, "")
	if len(images) == 0 || len(indexes) == 0 {
		return nil, fmt.Errorf("rebuilding %s: the lock lists no images", l.Version)
	}
	prov, err := lockedProvenance(l, images[0], ropts)
	if err != nil {
		return nil, fmt.Errorf("rebuilding %s: %w", l.Version, err)
	}
	sum := prov.Summary()
	goVersion, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output()
	if err != nil {
		return nil, fmt.Errorf("rebuilding %s: finding the Go toolchain: %w", l.Version, err)
	}
	if got := strings.TrimSpace(string(goVersion)); got != sum.GoVersion {
		return nil, fmt.Errorf("rebuilding %s: it was built with %s, this machine has %s (set GOTOOLCHAIN=%s)", l.Version, sum.GoVersion, got, sum.GoVersion)
	}
	mainPkg := prov.Provenance.GetBuildDefinition().GetExternalParameters().GetFields()["mainPackage"].GetStringValue()
	if mainPkg == "" {
		return nil, fmt.Errorf("rebuilding %s: the provenance names no main package", l.Version)
	}
	if err := CheckMainPackage(mainPkg); err != nil {
		return nil, fmt.Errorf("rebuilding %s: the provenance's %w", l.Version, err)
	}
	// The flags the release was built with, not today's defaults: a release
	// from before a change of them rebuilds as it was made.
	flags := prov.Flags()
	if len(flags) == 0 {
		return nil, fmt.Errorf("rebuilding %s: the provenance records no go build flags", l.Version)
	}
	if err := build.CheckFlags(flags); err != nil {
		return nil, fmt.Errorf("rebuilding %s: the provenance's %w", l.Version, err)
	}
	opts := Options{Version: l.Version, Commit: l.Commit, Source: l.Source, Created: l.Created, ModuleDir: o.ModuleDir,
		MainPackage: mainPkg, LicenseFiles: o.LicenseFiles, OutDir: o.OutDir, Remote: o.Remote, NoScan: true, BuildFlags: flags}
	for _, ix := range indexes {
		ann := ix.Annotations
		opts.Registry = strings.TrimSuffix(ix.Repository, "/"+ix.Name)
		opts.Licenses, opts.Vendor, opts.Summary = ann[image.AnnotationLicenses], ann[image.AnnotationVendor], ann[image.AnnotationDesc]
		switch ix.Variant {
		case VariantUBI:
			opts.UBIName = ix.Name
		case VariantStandard:
			opts.StandardName = ix.Name
		}
	}
	if err := fromLockedImages(&opts, images, ropts); err != nil {
		return nil, fmt.Errorf("rebuilding %s: %w", l.Version, err)
	}
	if err := lockedFIPS(&opts, l, images, ropts); err != nil {
		return nil, fmt.Errorf("rebuilding %s: %w", l.Version, err)
	}
	r := &run{opts: opts, res: &Result{ImageSizes: map[string]int64{}}, log: o.Log, imageByDigest: map[string]*builtImage{}, ropts: ropts}
	if r.log == nil {
		r.log = io.Discard
	}
	if err := r.buildImages(ctx); err != nil {
		return nil, fmt.Errorf("rebuilding %s: %w", l.Version, err)
	}
	if err := r.writeLayout(ctx); err != nil {
		return nil, fmt.Errorf("rebuilding %s: %w", l.Version, err)
	}
	rep := &RebuildReport{Version: l.Version, Commit: l.Commit, GoVersion: sum.GoVersion, Layout: r.layout}
	for _, img := range images {
		ri := RebuiltImage{Kind: img.Kind, Name: img.Name, Platform: img.Platform, Locked: img.Digest}
		for _, bi := range r.images {
			if bi.name == img.Name && bi.platform.String() == img.Platform {
				ri.Rebuilt = bi.digest.String()
				ri.Identical = ri.Rebuilt == img.Digest
				if !ri.Identical {
					if err := explain(&ri, bi.img, digestRef(img), ropts); err != nil {
						return nil, fmt.Errorf("comparing %s %s: %w", img.Name, img.Platform, err)
					}
				}
			}
		}
		rep.Images = append(rep.Images, ri)
	}
	for _, ix := range indexes {
		ri := RebuiltImage{Kind: ix.Kind, Name: ix.Name, Locked: ix.Digest}
		for _, bi := range r.indexes {
			if bi.name == ix.Name {
				ri.Rebuilt = bi.digest.String()
				ri.Identical = ri.Rebuilt == ix.Digest
			}
		}
		if !ri.Identical {
			ri.Difference = "the index differs (see its images)"
		}
		rep.Images = append(rep.Images, ri)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// fromLockedImages sets what the build options take from the locked images
// rather than the lock: the platforms, and the UBI base and long description
// of the UBI variant, which only the image itself records.
func fromLockedImages(opts *Options, images []release.Artifact, ropts []remote.Option) error {
	seen := map[string]bool{}
	for _, img := range images {
		if p, err := v1.ParsePlatform(img.Platform); err == nil && !seen[img.Platform] {
			seen[img.Platform] = true
			opts.Platforms = append(opts.Platforms, *p)
		}
		if img.Variant != VariantUBI || opts.UBIBase != "" {
			continue
		}
		// The UBI base and the long description are in the image itself.
		locked, err := remote.Image(digestRef(img), ropts...)
		if err != nil {
			return fmt.Errorf("reading %s: %w", digestRef(img), err)
		}
		m, err := locked.Manifest()
		if err != nil {
			return err
		}
		cf, err := locked.ConfigFile()
		if err != nil {
			return err
		}
		opts.UBIBase, opts.Description = m.Annotations[image.AnnotationBaseName], cf.Config.Labels["description"]
	}
	return nil
}

// lockedFIPS sets the -fips variants' platforms to those the lock lists
// (none for a release made before them) and GOFIPS140 to the module
// version their provenance records, so the rebuild links the same module
// whatever the toolchain's alias names today. The variants' names follow
// from the standard and UBI ones; a lock naming them otherwise is refused
// rather than rebuilt under other names.
func lockedFIPS(opts *Options, l *release.Lock, images []release.Artifact, ropts []remote.Option) error {
	opts.FIPSPlatforms = []v1.Platform{}
	want := map[string]string{VariantFIPS: opts.StandardName + FIPSSuffix, VariantUBIFIPS: opts.UBIName + FIPSSuffix}
	seen := map[string]bool{}
	for _, img := range images {
		if img.Variant != VariantFIPS && img.Variant != VariantUBIFIPS {
			continue
		}
		if img.Name != want[img.Variant] {
			return fmt.Errorf("the %s image %s is not named %q, as this pipeline names that variant", img.Variant, img.Name, want[img.Variant])
		}
		if opts.GOFIPS140 == "" {
			prov, err := lockedProvenance(l, img, ropts)
			if err != nil {
				return err
			}
			v := prov.Provenance.GetBuildDefinition().GetInternalParameters().GetFields()["env"].GetStructValue().GetFields()["GOFIPS140"].GetStringValue()
			// It reaches go build's environment: only a module version.
			if !fipsVersionRE.MatchString(v) {
				return fmt.Errorf("the provenance of %s %s records GOFIPS140 %q, not a Go Cryptographic Module version (v1.0.0-c2097c7c)", img.Name, img.Platform, v)
			}
			opts.GOFIPS140 = v
		}
		if p, err := v1.ParsePlatform(img.Platform); err == nil && !seen[img.Platform] {
			seen[img.Platform] = true
			opts.FIPSPlatforms = append(opts.FIPSPlatforms, *p)
		}
	}
	return nil
}

// fipsVersionRE is the form of a GOFIPS140 module version as binaries
// record it: the alias resolved, e.g. v1.0.0-c2097c7c or v1.26.0.
var fipsVersionRE = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9a-f]{8})?$`)

func digestRef(a release.Artifact) name.Digest {
	d, _ := name.NewDigest(a.Repository + "@" + a.Digest)
	return d
}

// lockedProvenance reads and parses the provenance the lock lists for img:
// a layer of its cosign attestation manifest (.att, key-signed releases) or
// its provenance bundle (keyless). Its signature is not checked here: the
// caller verifies the release first (`reloader-release rebuild` runs the
// verification of `reloader-release verify`), and the main package it names
// is checked before it reaches go build.
func lockedProvenance(l *release.Lock, img release.Artifact, ropts []remote.Option) (*provenance.Statement, error) {
	for _, a := range l.Artifacts {
		format := trust.Format(a)
		if a.Kind != release.KindAttestation || a.Subject != img.Digest ||
			format == trust.FormatBundle && a.PredicateType != provenance.PredicateType {
			continue
		}
		m, err := remote.Image(digestRef(a), ropts...)
		if err != nil {
			return nil, fmt.Errorf("reading the attestations %s: %w", a.Digest, err)
		}
		layers, err := m.Layers()
		if err != nil {
			return nil, fmt.Errorf("reading the attestations %s: %w", a.Digest, err)
		}
		for _, layer := range layers {
			rc, err := layer.Compressed()
			if err != nil {
				return nil, err
			}
			b, err := io.ReadAll(io.LimitReader(rc, 8<<20))
			rc.Close()
			if err != nil {
				return nil, fmt.Errorf("reading the attestations %s: %w", a.Digest, err)
			}
			if st := trust.ProvenanceStatement(format, b); st != nil {
				return provenance.Parse(st)
			}
		}
	}
	return nil, fmt.Errorf("the lock lists no provenance for %s %s (a release before provenance cannot be rebuilt this way)", img.Name, img.Platform)
}

// explain finds the first differing layer of rebuilt against the locked
// image, and the first differing file in it.
func explain(ri *RebuiltImage, rebuilt v1.Image, locked name.Digest, ropts []remote.Option) error {
	old, err := remote.Image(locked, ropts...)
	if err != nil {
		return fmt.Errorf("reading the released image: %w", err)
	}
	ol, err := old.Layers()
	if err != nil {
		return err
	}
	nl, err := rebuilt.Layers()
	if err != nil {
		return err
	}
	for i := 0; i < len(ol) || i < len(nl); i++ {
		if i >= len(ol) || i >= len(nl) {
			ri.Layer, ri.Difference = i, fmt.Sprintf("the release has %d layers, the rebuild %d", len(ol), len(nl))
			return nil
		}
		od, err := ol[i].Digest()
		if err != nil {
			return err
		}
		nd, err := nl[i].Digest()
		if err != nil {
			return err
		}
		if od == nd {
			continue
		}
		ri.Layer, ri.LayerDigest = i, od.String()
		of, err := files(ol[i])
		if err != nil {
			return fmt.Errorf("reading released layer %d: %w", i, err)
		}
		nf, err := files(nl[i])
		if err != nil {
			return fmt.Errorf("reading rebuilt layer %d: %w", i, err)
		}
		for _, f := range nf.order {
			if o, ok := of.sums[f]; !ok {
				ri.File, ri.Difference = f, "only in the rebuild"
				return nil
			} else if o != nf.sums[f] {
				ri.File, ri.Difference = f, "content or metadata differs"
				return nil
			}
		}
		for _, f := range of.order {
			if _, ok := nf.sums[f]; !ok {
				ri.File, ri.Difference = f, "missing from the rebuild"
				return nil
			}
		}
		ri.Difference = "same files, different archive bytes (order or compression)"
		return nil
	}
	ri.Layer, ri.Difference = -1, "same layers; the image configuration or manifest differs"
	return nil
}

type layerFiles struct {
	order []string
	sums  map[string]string
}

// files lists a layer's entries with a hash of each one's header fields
// and content.
func files(l v1.Layer) (*layerFiles, error) {
	rc, err := l.Uncompressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	out := &layerFiles{sums: map[string]string{}}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		s := sha256.New()
		fmt.Fprintf(s, "%d %o %d %d %s %s\n", h.Typeflag, h.Mode, h.Uid, h.Gid, h.ModTime.UTC(), h.Linkname)
		if _, err := io.Copy(s, tr); err != nil {
			return nil, err
		}
		p := "/" + strings.TrimPrefix(filepath.Clean("/"+h.Name), "/")
		out.order = append(out.order, p)
		out.sums[p] = hex.EncodeToString(s.Sum(nil))
	}
}

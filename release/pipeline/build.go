package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/internal/image"
	"github.com/reloader-dev/reloader/release/build"
)

// buildImages builds the binaries once per platform and assembles both
// variants' images and indexes from them. It stays whole so the one build
// per platform that both variants share is visible.
func (r *run) buildImages(ctx context.Context) error {
	o := r.opts
	// The UBI platforms are a subset of the standard ones: one build each.
	platforms := only(StandardPlatforms(), o.Platforms)
	bins, err := build.Binaries(ctx, build.Options{MainPackage: o.MainPackage, Dir: o.ModuleDir,
		OutDir: filepath.Join(o.OutDir, "bin"), BinaryName: "reloader", Platforms: platforms,
		Version: o.Version, Commit: o.Commit, Date: o.Created, StampPackage: o.StampPackage})
	if err != nil {
		return err
	}
	byPlatform := map[string][]byte{}
	for _, b := range bins {
		data, err := os.ReadFile(b.Path)
		if err != nil {
			return fmt.Errorf("reading the %s binary: %w", b.Platform.String(), err)
		}
		byPlatform[b.Platform.String()] = data
	}
	var licenses []image.File
	for _, p := range o.LicenseFiles {
		data, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("reading license file: %w", err)
		}
		licenses = append(licenses, image.File{Path: "/licenses/" + filepath.Base(p), Mode: 0o644, Data: data})
	}
	content := func(p v1.Platform) image.Content {
		return image.Content{Platform: p, Binary: byPlatform[p.String()], BinaryPath: controllerPath, Licenses: licenses}
	}

	var std []v1.Image
	for _, p := range platforms {
		img, err := image.Standard(r.meta(o.StandardName), content(p))
		if err != nil {
			return err
		}
		std = append(std, img)
		if err := r.addImage(VariantStandard, o.StandardName, p, img); err != nil {
			return err
		}
	}
	if err := r.addIndex(VariantStandard, o.StandardName, std); err != nil {
		return err
	}
	if o.UBIBase == "" {
		fmt.Fprintln(r.log, "    no UBI base given: skipping the UBI variant")
		return nil
	}
	baseRef, _ := name.NewDigest(o.UBIBase)
	baseIdx, err := remote.Index(baseRef, r.ropts...)
	if err != nil {
		return fmt.Errorf("fetching the UBI base %s: %w", o.UBIBase, err)
	}
	var ubi []v1.Image
	ubiPlatforms := only(UBIPlatforms(), o.Platforms)
	if len(ubiPlatforms) == 0 {
		fmt.Fprintln(r.log, "    no UBI platform among those asked for: skipping the UBI variant")
		return nil
	}
	for _, p := range ubiPlatforms {
		base, baseDigest, err := image.SelectPlatform(baseIdx, p)
		if err != nil {
			return fmt.Errorf("UBI base %s: %w", o.UBIBase, err)
		}
		img, err := image.UBI(base, o.UBIBase, baseDigest.String(), r.meta(o.UBIName), content(p))
		if err != nil {
			return err
		}
		ubi = append(ubi, img)
		if err := r.addImage(VariantUBI, o.UBIName, p, img); err != nil {
			return err
		}
	}
	return r.addIndex(VariantUBI, o.UBIName, ubi)
}

func (r *run) repo(imageName string) string { return r.opts.Registry + "/" + imageName }

func (r *run) addImage(variant, nm string, p v1.Platform, img v1.Image) error {
	d, err := img.Digest()
	if err != nil {
		return fmt.Errorf("digest of %s %s: %w", nm, p.String(), err)
	}
	size, err := imageSize(img)
	if err != nil {
		return fmt.Errorf("size of %s %s: %w", nm, p.String(), err)
	}
	r.res.ImageSizes[variant+" "+p.String()] = size
	bi := &builtImage{variant: variant, name: nm, repo: r.repo(nm), platform: p, img: img, digest: d}
	r.images = append(r.images, bi)
	r.imageByDigest[d.String()] = bi
	fmt.Fprintf(r.log, "    %-13s %-12s %s  %6.1f MiB\n", nm, p.String(), d, float64(size)/(1<<20))
	return nil
}

func imageSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return 0, err
	}
	n := int64(len(raw)) + m.Config.Size
	for _, l := range m.Layers {
		n += l.Size
	}
	return n, nil
}

func (r *run) addIndex(variant, nm string, imgs []v1.Image) error {
	idx, err := image.Index(r.meta(nm), imgs)
	if err != nil {
		return err
	}
	d, err := idx.Digest()
	if err != nil {
		return fmt.Errorf("digest of the %s index: %w", nm, err)
	}
	r.indexes = append(r.indexes, &builtIndex{variant: variant, name: nm, repo: r.repo(nm), idx: idx, digest: d})
	fmt.Fprintf(r.log, "    %-13s %-12s %s\n", nm, "index", d)
	return nil
}

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
	"github.com/reloader-dev/reloader/publish/build"
)

// buildImages compiles the controller once per platform, and once more per
// FIPS platform against the Go Cryptographic Module, and assembles the
// four variants' images and indexes from those binaries: standard and UBI
// share one build per platform, fips and ubi-fips the FIPS one.
func (r *run) buildImages(ctx context.Context) error {
	o := r.opts
	// The UBI and FIPS platforms are subsets of the standard ones.
	platforms := only(StandardPlatforms(), o.Platforms)
	fipsPlatforms := only(only(FIPSPlatforms(), o.Platforms), o.FIPSPlatforms)
	gofips := o.GOFIPS140
	if gofips == "" {
		gofips = DefaultGOFIPS140
	}
	bins, err := r.compile(ctx, platforms, "", "bin")
	if err != nil {
		return err
	}
	fipsBins, err := r.compile(ctx, fipsPlatforms, gofips, "bin-fips")
	if err != nil {
		return err
	}
	licenses, err := r.licenseFiles()
	if err != nil {
		return err
	}
	scratch := func(nm string) assembler {
		return func(_ v1.Platform, c image.Content) (v1.Image, error) { return image.Standard(r.meta(nm), c) }
	}
	fipsName := o.StandardName + FIPSSuffix
	if err := r.addVariant(variantBuild{VariantStandard, o.StandardName, platforms, bins, nil, licenses}, scratch(o.StandardName)); err != nil {
		return err
	}
	if err := r.addVariant(variantBuild{VariantFIPS, fipsName, fipsPlatforms, fipsBins, []string{FIPSGODEBUG}, licenses}, scratch(fipsName)); err != nil {
		return err
	}
	if o.UBIBase == "" {
		fmt.Fprintln(r.log, "    no UBI base given: skipping the UBI variants")
		return nil
	}
	ubiPlatforms := only(UBIPlatforms(), o.Platforms)
	if len(ubiPlatforms) == 0 {
		fmt.Fprintln(r.log, "    no UBI platform among those asked for: skipping the UBI variants")
		return nil
	}
	baseRef, _ := name.NewDigest(o.UBIBase)
	baseIdx, err := remote.Index(baseRef, r.ropts...)
	if err != nil {
		return fmt.Errorf("fetching the UBI base %s: %w", o.UBIBase, err)
	}
	onUBI := func(nm string) assembler {
		return func(p v1.Platform, c image.Content) (v1.Image, error) {
			base, baseDigest, err := image.SelectPlatform(baseIdx, p)
			if err != nil {
				return nil, fmt.Errorf("UBI base %s: %w", o.UBIBase, err)
			}
			return image.UBI(base, o.UBIBase, baseDigest.String(), r.meta(nm), c)
		}
	}
	ubiFIPSName := o.UBIName + FIPSSuffix
	if err := r.addVariant(variantBuild{VariantUBI, o.UBIName, ubiPlatforms, bins, nil, licenses}, onUBI(o.UBIName)); err != nil {
		return err
	}
	return r.addVariant(variantBuild{VariantUBIFIPS, ubiFIPSName, only(ubiPlatforms, fipsPlatforms), fipsBins, []string{FIPSGODEBUG}, licenses}, onUBI(ubiFIPSName))
}

// expectedIndexes is the index name of each variant buildImages makes for
// these options, as the release stage expects a build to report them.
func (o *Options) expectedIndexes() map[string]string {
	platforms := only(StandardPlatforms(), o.Platforms)
	fipsPlatforms := only(only(FIPSPlatforms(), o.Platforms), o.FIPSPlatforms)
	want := map[string]string{}
	if len(platforms) > 0 {
		want[o.StandardName] = VariantStandard
	}
	if len(fipsPlatforms) > 0 {
		want[o.StandardName+FIPSSuffix] = VariantFIPS
	}
	ubiPlatforms := only(UBIPlatforms(), o.Platforms)
	if o.UBIBase == "" || len(ubiPlatforms) == 0 {
		return want
	}
	want[o.UBIName] = VariantUBI
	if len(only(ubiPlatforms, fipsPlatforms)) > 0 {
		want[o.UBIName+FIPSSuffix] = VariantUBIFIPS
	}
	return want
}

// compile builds the controller for platforms into OutDir/dir, against the
// FIPS module gofips140 names when it is set; it returns each binary's path
// by platform.
func (r *run) compile(ctx context.Context, platforms []v1.Platform, gofips140, dir string) (map[string]string, error) {
	o := r.opts
	if len(platforms) == 0 {
		return nil, nil
	}
	bins, err := build.Binaries(ctx, build.Options{MainPackage: o.MainPackage, Dir: o.ModuleDir,
		OutDir: filepath.Join(o.OutDir, dir), BinaryName: "reloader", Platforms: platforms,
		Version: o.Version, Commit: o.Commit, Date: o.Created, StampPackage: o.StampPackage, GOFIPS140: gofips140, Flags: o.BuildFlags})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, b := range bins {
		out[b.Platform.String()] = b.Path
	}
	return out, nil
}

func (r *run) licenseFiles() ([]image.File, error) {
	var licenses []image.File
	for _, p := range r.opts.LicenseFiles {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading license file: %w", err)
		}
		licenses = append(licenses, image.File{Path: "/licenses/" + filepath.Base(p), Mode: 0o644, Data: data})
	}
	return licenses, nil
}

// assembler makes one platform's image of a variant from its content.
type assembler func(v1.Platform, image.Content) (v1.Image, error)

// variantBuild is what one variant's images are made of: its platforms'
// binaries (by platform), the environment its images add, its licences.
type variantBuild struct {
	variant, name string
	platforms     []v1.Platform
	binaries      map[string]string
	env           []string
	licenses      []image.File
}

// addVariant assembles a variant's platform images and its index; a
// variant with no platform (a FIPS one outside the FIPS platforms) has none.
func (r *run) addVariant(v variantBuild, assemble assembler) error {
	if len(v.platforms) == 0 {
		return nil
	}
	var imgs []v1.Image
	for _, p := range v.platforms {
		bin := v.binaries[p.String()]
		data, err := os.ReadFile(bin)
		if err != nil {
			return fmt.Errorf("reading the %s binary of %s: %w", p.String(), v.name, err)
		}
		img, err := assemble(p, image.Content{Platform: p, Binary: data, BinaryPath: controllerPath, Licenses: v.licenses, Env: v.env})
		if err != nil {
			return err
		}
		imgs = append(imgs, img)
		if err := r.addImage(v.variant, v.name, p, img); err != nil {
			return err
		}
	}
	return r.addIndex(v.variant, v.name, imgs)
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
	fmt.Fprintf(r.log, "    %-17s %-12s %s  %6.1f MiB\n", nm, p.String(), d, float64(size)/(1<<20))
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
	fmt.Fprintf(r.log, "    %-17s %-12s %s\n", nm, "index", d)
	return nil
}

// Package pipeline runs a whole release: build the controller for every
// platform, assemble both image variants, generate SBOMs, push by digest,
// scan and gate on the vulnerability policy, and only then tag, sign, attest,
// write and sign the release lock, verify everything as a user would, and
// render the versions page. It is the same code locally (a loopback
// registry, a generated key) and in GitHub Actions (keyless).
package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/reloader-dev/reloader/policy"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/artifact"
	"github.com/reloader-dev/reloader/release/build"
	"github.com/reloader-dev/reloader/release/chart"
	"github.com/reloader-dev/reloader/release/image"
	"github.com/reloader-dev/reloader/release/page"
	"github.com/reloader-dev/reloader/release/sign"
	"github.com/reloader-dev/reloader/release/verify"
	"github.com/reloader-dev/reloader/sbom"
)

// Variant names.
const (
	VariantStandard = "standard"
	VariantUBI      = "ubi"
)

// StandardPlatforms is what the standard (scratch) variant ships for.
func StandardPlatforms() []v1.Platform {
	return []v1.Platform{
		{OS: "linux", Architecture: "amd64"},
		{OS: "linux", Architecture: "arm64"},
		{OS: "linux", Architecture: "arm", Variant: "v7"},
	}
}

// UBIPlatforms is what the UBI variant ships for (UBI has no 32-bit ARM).
func UBIPlatforms() []v1.Platform {
	return []v1.Platform{
		{OS: "linux", Architecture: "amd64"},
		{OS: "linux", Architecture: "arm64"},
	}
}

// The lock's OCI artifact, as reloader-mirror --lock-ref reads it.
const (
	LockRepository   = "reloader-release"
	LockArtifactType = "application/vnd.reloader.release.lock.v1+json"
)

// ScanOptions configures the vulnerability gate.
type ScanOptions struct {
	Trivy policy.TrivyOptions
	// PolicyPath is the release policy file (policy/release-policy.yaml).
	PolicyPath string
}

// Options configures a release.
type Options struct {
	Version string
	// Commit is the full git commit id being released.
	Commit string
	// Source is the repository URL.
	Source string
	// Created is the release time, from SOURCE_DATE_EPOCH.
	Created time.Time
	// Now judges exception expiry; it is the wall clock in real releases.
	Now time.Time

	// ModuleDir is the checkout; MainPackage the controller's main package.
	ModuleDir, MainPackage string
	// StampPackage holds Version/Commit/Date; default build.BuildInfoPackage.
	StampPackage string

	// Registry is the repository prefix, e.g. "ghcr.io/reloader-dev".
	Registry string
	// StandardName and UBIName are the image repositories under Registry.
	StandardName, UBIName string
	// UBIBase is the UBI base index as name@sha256:...; empty skips UBI.
	UBIBase string
	// LicenseFiles are shipped under /licenses in both variants.
	LicenseFiles []string
	// Licenses is the SPDX license expression of the product.
	Licenses, Vendor, Summary, Description string

	// ChartDirs are Helm chart directories to package and push.
	ChartDirs []string

	// OutDir receives binaries, SBOM files, reports, the lock and the page.
	OutDir string

	// Signer signs; or NewSigner makes one when signing starts, because a
	// keyless certificate lives ten minutes and the build takes longer.
	Signer    *sign.Signer
	NewSigner func(context.Context) (*sign.Signer, error)
	// Verify configures the final verification (trust root for keyless);
	// the expected signer is always the Signer's identity.
	Verify verify.Options
	// Scan is the vulnerability gate; nil skips it and says so loudly in
	// the log. Only `local` permits nil.
	Scan *ScanOptions

	Remote []remote.Option
	Log    io.Writer
}

// Result is what a release produced.
type Result struct {
	Lock       *release.Lock
	LockPath   string
	BundlePath string
	// LockRef is where the lock artifact was published (repo:version).
	LockRef string
	// Steps are the durations of each step, in order.
	Steps []Step
	// ImageSizes is the size (manifest, config and compressed layers) of
	// each platform image, keyed "variant platform".
	ImageSizes map[string]int64
	Gate       *policy.Result
}

// Step is one timed step of the pipeline.
type Step struct {
	Name     string
	Duration time.Duration
}

type run struct {
	opts  Options
	res   *Result
	log   io.Writer
	lock  *release.Lock
	ropts []remote.Option
	// images are the built platform images in push order.
	images  []*builtImage
	indexes []*builtIndex
	// lockArtifact is the lock's OCI artifact, pushed by digest.
	lockArtifact name.Digest
}

type builtImage struct {
	variant, name, repo string
	platform            v1.Platform
	img                 v1.Image
	digest              v1.Hash
	docs                []sbom.Document
}

type builtIndex struct {
	variant, name, repo string
	idx                 v1.ImageIndex
	digest              v1.Hash
}

// Run performs the release. On any failure nothing is tagged or signed
// beyond what earlier steps did, and the error names the step.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	r := &run{opts: opts, res: &Result{ImageSizes: map[string]int64{}}, log: opts.Log,
		ropts: append([]remote.Option{remote.WithContext(ctx)}, opts.Remote...)}
	if r.log == nil {
		r.log = io.Discard
	}
	r.lock = &release.Lock{Schema: release.LockSchema, Version: opts.Version, Source: opts.Source,
		Commit: opts.Commit, Created: opts.Created.UTC()}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"build images", r.buildImages},
		{"generate SBOMs", r.generateSBOMs},
		{"push by digest", r.push},
		{"vulnerability gate", r.gate},
		{"publish SBOMs and charts", r.publishArtifacts},
		{"sign and attest", r.sign},
		{"write and sign the lock", r.writeLock},
		{"verify offline", r.verify},
		{"publish tags", r.tag},
		{"versions page", r.page},
	}
	for _, s := range steps {
		start := time.Now()
		fmt.Fprintf(r.log, "==> %s\n", s.name)
		if err := s.fn(ctx); err != nil {
			return r.res, fmt.Errorf("release %s: %s: %w", opts.Version, s.name, err)
		}
		r.res.Steps = append(r.res.Steps, Step{Name: s.name, Duration: time.Since(start)})
	}
	r.res.Lock = r.lock
	return r.res, nil
}

func (o *Options) check() error {
	var errs []error
	if (o.Signer == nil) == (o.NewSigner == nil) {
		errs = append(errs, errors.New("give exactly one of Signer and NewSigner"))
	}
	for k, v := range map[string]string{"version": o.Version, "commit": o.Commit, "source": o.Source, "registry": o.Registry,
		"main package": o.MainPackage, "output directory": o.OutDir, "standard image name": o.StandardName} {
		if v == "" {
			errs = append(errs, fmt.Errorf("no %s", k))
		}
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
	if len(errs) > 0 {
		return fmt.Errorf("release options: %w", errors.Join(errs...))
	}
	return nil
}

func (r *run) meta(name string) image.Metadata {
	o := r.opts
	return image.Metadata{Name: name, Version: o.Version, Commit: o.Commit, Source: o.Source, Licenses: o.Licenses,
		Vendor: o.Vendor, Summary: o.Summary, Description: o.Description, Created: o.Created}
}

func (r *run) buildImages(ctx context.Context) error {
	o := r.opts
	platforms := StandardPlatforms()
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
		return image.Content{Platform: p, Binary: byPlatform[p.String()], BinaryPath: "/reloader", Licenses: licenses}
	}

	var std []v1.Image
	for _, p := range StandardPlatforms() {
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
	for _, p := range UBIPlatforms() {
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
	r.images = append(r.images, &builtImage{variant: variant, name: nm, repo: r.repo(nm), platform: p, img: img, digest: d})
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

func (r *run) generateSBOMs(ctx context.Context) error {
	dir := filepath.Join(r.opts.OutDir, "sbom")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The module cache the binaries were just built from holds every
	// dependency's licence; syft reads them there, offline.
	modCache, err := sbom.GoModCache(ctx, r.opts.ModuleDir)
	if err != nil {
		return err
	}
	for _, bi := range r.images {
		docs, err := sbom.Generate(ctx, bi.img, sbom.Options{Name: bi.name, Version: r.opts.Version, Created: r.opts.Created,
			Namespace: r.opts.Source + "/sbom", WorkDir: r.opts.OutDir, GoModCache: modCache})
		if err != nil {
			return err
		}
		bi.docs = docs
		for _, d := range docs {
			p := filepath.Join(dir, page.SBOMFileName(bi.name, bi.platform.String(), d.MediaType))
			if err := os.WriteFile(p, d.Data, 0o644); err != nil {
				return fmt.Errorf("writing SBOM: %w", err)
			}
		}
		fmt.Fprintf(r.log, "    %-13s %-12s SPDX %d B, CycloneDX %d B\n", bi.name, bi.platform.String(), len(docs[0].Data), len(docs[1].Data))
	}
	return nil
}

// push uploads every index (and through it every image) by digest only:
// nothing is tagged before the gate has passed, so a failed release leaves
// no tag anyone would pull.
func (r *run) push(ctx context.Context) error {
	for _, bi := range r.indexes {
		ref, err := name.NewDigest(bi.repo + "@" + bi.digest.String())
		if err != nil {
			return err
		}
		if err := remote.WriteIndex(ref, bi.idx, r.ropts...); err != nil {
			return fmt.Errorf("pushing %s: %w", ref, err)
		}
		if err := r.addLockEntry(release.Artifact{Kind: release.KindImageIndex, Name: bi.name, Variant: bi.variant,
			Repository: bi.repo, Tag: r.opts.Version, Annotations: r.meta(bi.name).Annotations()}, ref); err != nil {
			return err
		}
	}
	for _, bi := range r.images {
		ref, err := name.NewDigest(bi.repo + "@" + bi.digest.String())
		if err != nil {
			return err
		}
		if err := r.addLockEntry(release.Artifact{Kind: release.KindImage, Name: bi.name, Variant: bi.variant,
			Platform: bi.platform.String(), Repository: bi.repo}, ref); err != nil {
			return err
		}
	}
	return nil
}

// addLockEntry completes a with what the registry reports for ref.
func (r *run) addLockEntry(a release.Artifact, ref name.Reference) error {
	desc, err := remote.Get(ref, r.ropts...)
	if err != nil {
		return fmt.Errorf("reading back %s: %w", ref, err)
	}
	a.Digest, a.Size, a.MediaType = desc.Digest.String(), desc.Size, string(desc.MediaType)
	r.lock.Artifacts = append(r.lock.Artifacts, a)
	return nil
}

func (r *run) gate(ctx context.Context) error {
	if r.opts.Scan == nil {
		fmt.Fprintln(r.log, "    WARNING: vulnerability scan SKIPPED (no trivy); this release must not be published")
		return nil
	}
	pol, err := policy.ReadPolicy(r.opts.Scan.PolicyPath)
	if err != nil {
		return err
	}
	topts := r.opts.Scan.Trivy
	topts.OutputDir = filepath.Join(r.opts.OutDir, "trivy")
	var scanned []policy.ScannedImage
	for _, bi := range r.images {
		ref := bi.repo + "@" + bi.digest.String()
		nm := bi.name + " " + bi.platform.String()
		_, rep, err := policy.ScanImage(ctx, topts, ref, bi.name+"-"+build.PlatformDir(bi.platform))
		if err != nil {
			// Fail closed: the image is judged with no report.
			fmt.Fprintf(r.log, "    %s: %v\n", nm, err)
		}
		scanned = append(scanned, policy.ScannedImage{Image: nm, Report: rep})
	}
	res := policy.Evaluate(pol, scanned, r.opts.Now)
	r.res.Gate = &res
	if err := res.WriteTable(r.log); err != nil {
		return err
	}
	if b, err := json.MarshalIndent(res, "", "  "); err == nil {
		_ = os.WriteFile(filepath.Join(r.opts.OutDir, "gate.json"), append(b, '\n'), 0o644)
	}
	if !res.Passed {
		return errors.New("the vulnerability gate failed; nothing was tagged or signed")
	}
	return nil
}

func (r *run) publishArtifacts(ctx context.Context) error {
	for _, bi := range r.images {
		subject := v1.Descriptor{}
		for _, a := range r.lock.Artifacts {
			if a.Kind == release.KindImage && a.Digest == bi.digest.String() && a.Repository == bi.repo {
				h, _ := v1.NewHash(a.Digest)
				subject = v1.Descriptor{MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: h, Size: a.Size}
			}
		}
		for _, d := range bi.docs {
			art := artifact.Artifact{ArtifactType: d.MediaType,
				Layers: []artifact.Blob{{MediaType: d.MediaType, Data: d.Data, Annotations: map[string]string{
					image.AnnotationTitle: page.SBOMFileName(bi.name, bi.platform.String(), d.MediaType)}}},
				Annotations: map[string]string{image.AnnotationCreated: r.opts.Created.UTC().Format(time.RFC3339)},
				Subject:     &subject}
			repo, err := name.NewRepository(bi.repo)
			if err != nil {
				return err
			}
			desc, err := art.Push(ctx, repo, "", r.ropts...)
			if err != nil {
				return err
			}
			a := release.Artifact{Kind: release.KindSBOM, Name: bi.name, Variant: bi.variant, Platform: bi.platform.String(),
				Repository: bi.repo, ArtifactType: d.MediaType, Subject: bi.digest.String(), PredicateType: predicateFor(d.MediaType)}
			if err := r.addLockEntry(a, repo.Digest(desc.Digest.String())); err != nil {
				return err
			}
		}
	}
	for _, dir := range r.opts.ChartDirs {
		pkg, err := chart.Package(chart.Options{Dir: dir, Created: r.opts.Created, OutDir: filepath.Join(r.opts.OutDir, "charts")})
		if err != nil {
			return err
		}
		repo := r.opts.Registry + "/charts/" + pkg.Name
		tag, err := name.NewTag(repo + ":" + pkg.Version)
		if err != nil {
			return fmt.Errorf("chart %s: %w", pkg.Name, err)
		}
		desc, err := pkg.Artifact(r.opts.Source).Push(ctx, tag.Context(), "", r.ropts...)
		if err != nil {
			return err
		}
		if err := r.addLockEntry(release.Artifact{Kind: release.KindChart, Name: pkg.Name, Repository: repo, Tag: pkg.Version,
			ArtifactType: chart.ConfigMediaType}, tag.Context().Digest(desc.Digest.String())); err != nil {
			return err
		}
		fmt.Fprintf(r.log, "    chart %s %s %s\n", pkg.Name, pkg.Version, desc.Digest)
	}
	return nil
}

func predicateFor(mediaType string) string {
	if mediaType == sbom.MediaTypeCycloneDX {
		return sign.PredicateCycloneDX
	}
	return sign.PredicateSPDX
}

func (r *run) sign(ctx context.Context) error {
	if r.opts.Signer == nil {
		s, err := r.opts.NewSigner(ctx)
		if err != nil {
			return fmt.Errorf("obtaining the signer: %w", err)
		}
		r.opts.Signer = s
	}
	signer := r.opts.Signer
	r.lock.Signer = signer.Identity()
	reg := sign.Registry{Remote: r.ropts}
	var subjects []release.Artifact
	for _, a := range r.lock.Artifacts {
		switch a.Kind {
		case release.KindImageIndex, release.KindImage, release.KindSBOM, release.KindChart:
			subjects = append(subjects, a)
		}
	}
	for _, a := range subjects {
		ref, err := name.NewDigest(a.Repository + "@" + a.Digest)
		if err != nil {
			return err
		}
		sboms := r.sbomsOf(a)
		if signer.Keyless() {
			if err := r.signWithBundles(ctx, reg, signer, a, ref, sboms); err != nil {
				return err
			}
			continue
		}
		if err := signer.Manifest(ctx, reg, ref, nil); err != nil {
			return err
		}
		for _, s := range sboms {
			doc, err := r.sbomData(s)
			if err != nil {
				return err
			}
			if err := signer.Attest(ctx, reg, ref, s.PredicateType, doc); err != nil {
				return err
			}
		}
	}
	if !signer.Keyless() {
		// Record the cosign signature and attestation manifests, so a
		// mirror copies them by digest like everything else.
		for _, a := range subjects {
			hex := a.Digest[len("sha256:"):]
			sigTag, err := name.NewTag(fmt.Sprintf("%s:sha256-%s.sig", a.Repository, hex))
			if err != nil {
				return err
			}
			if err := r.addLockEntry(release.Artifact{Kind: release.KindSignature, Name: a.Name, Variant: a.Variant, Platform: a.Platform,
				Repository: a.Repository, Tag: sigTag.TagStr(), Subject: a.Digest}, sigTag); err != nil {
				return err
			}
			if len(r.sbomsOf(a)) > 0 {
				attTag, _ := name.NewTag(fmt.Sprintf("%s:sha256-%s.att", a.Repository, hex))
				if err := r.addLockEntry(release.Artifact{Kind: release.KindAttestation, Name: a.Name, Variant: a.Variant, Platform: a.Platform,
					Repository: a.Repository, Tag: attTag.TagStr(), Subject: a.Digest}, attTag); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// tag publishes the version tags of the indexes, the charts and the lock,
// last: only a verified release becomes pullable by version.
func (r *run) tag(ctx context.Context) error {
	type tagging struct {
		ref name.Digest
		tag string
	}
	todo := []tagging{{r.lockArtifact, r.opts.Version}}
	for _, a := range r.lock.Artifacts {
		if (a.Kind == release.KindImageIndex || a.Kind == release.KindChart) && a.Tag != "" {
			ref, err := name.NewDigest(a.Repository + "@" + a.Digest)
			if err != nil {
				return err
			}
			todo = append(todo, tagging{ref, a.Tag})
		}
	}
	for _, t := range todo {
		desc, err := remote.Get(t.ref, r.ropts...)
		if err != nil {
			return fmt.Errorf("tagging %s: %w", t.ref, err)
		}
		tag := t.ref.Repository.Tag(t.tag)
		if err := remote.Tag(tag, desc, r.ropts...); err != nil {
			return fmt.Errorf("tagging %s: %w", tag, err)
		}
	}
	r.res.LockRef = r.lockArtifact.Repository.Tag(r.opts.Version).String()
	return nil
}

func (r *run) sbomsOf(a release.Artifact) []release.Artifact {
	if a.Kind != release.KindImage {
		return nil
	}
	var out []release.Artifact
	for _, s := range r.lock.Artifacts {
		if s.Kind == release.KindSBOM && s.Subject == a.Digest {
			out = append(out, s)
		}
	}
	return out
}

// signWithBundles signs a keyless release: a Sigstore bundle referrer per
// artifact and one per SBOM attestation, each listed in the lock.
func (r *run) signWithBundles(ctx context.Context, reg sign.Registry, signer *sign.Signer, a release.Artifact, ref name.Digest, sboms []release.Artifact) error {
	h, err := v1.NewHash(a.Digest)
	if err != nil {
		return err
	}
	subject := v1.Descriptor{MediaType: types.MediaType(a.MediaType), Digest: h, Size: a.Size}
	desc, ann, err := signer.BundleReferrer(ctx, reg, ref, subject, sign.PredicateCosignSign, nil)
	if err != nil {
		return err
	}
	r.lock.Artifacts = append(r.lock.Artifacts, release.Artifact{Kind: release.KindSignature, Name: a.Name, Variant: a.Variant,
		Platform: a.Platform, Repository: a.Repository, Digest: desc.Digest.String(), Size: desc.Size, MediaType: string(desc.MediaType),
		ArtifactType: sign.BundleMediaType, Subject: a.Digest, Annotations: ann})
	for _, s := range sboms {
		doc, err := r.sbomData(s)
		if err != nil {
			return err
		}
		desc, ann, err := signer.BundleReferrer(ctx, reg, ref, subject, s.PredicateType, doc)
		if err != nil {
			return err
		}
		r.lock.Artifacts = append(r.lock.Artifacts, release.Artifact{Kind: release.KindAttestation, Name: a.Name, Variant: a.Variant,
			Platform: a.Platform, Repository: a.Repository, Digest: desc.Digest.String(), Size: desc.Size, MediaType: string(desc.MediaType),
			ArtifactType: sign.BundleMediaType, PredicateType: s.PredicateType, Subject: a.Digest, Annotations: ann})
	}
	return nil
}

func (r *run) sbomData(s release.Artifact) ([]byte, error) {
	for _, bi := range r.images {
		if bi.digest.String() != s.Subject {
			continue
		}
		for _, d := range bi.docs {
			if predicateFor(d.MediaType) == s.PredicateType {
				return d.Data, nil
			}
		}
	}
	return nil, fmt.Errorf("no SBOM document for %s", s.Digest)
}

func (r *run) writeLock(ctx context.Context) error {
	sort.Slice(r.lock.Artifacts, func(i, j int) bool { return r.lock.Artifacts[i].Key() < r.lock.Artifacts[j].Key() })
	if err := r.lock.Validate(); err != nil {
		return err
	}
	data, err := r.lock.Marshal()
	if err != nil {
		return err
	}
	bundle, err := r.opts.Signer.Blob(ctx, data)
	if err != nil {
		return fmt.Errorf("signing the lock: %w", err)
	}
	r.res.LockPath = filepath.Join(r.opts.OutDir, release.LockFileName)
	r.res.BundlePath = r.res.LockPath + ".sigstore.json"
	if err := os.WriteFile(r.res.LockPath, data, 0o644); err != nil {
		return fmt.Errorf("writing the lock: %w", err)
	}
	if err := os.WriteFile(r.res.BundlePath, bundle, 0o644); err != nil {
		return fmt.Errorf("writing the lock bundle: %w", err)
	}
	// The lock also travels as an OCI artifact next to the images, where
	// reloader-mirror --lock-ref finds it: empty config, lock and bundle.
	repo, err := name.NewRepository(r.opts.Registry + "/" + LockRepository)
	if err != nil {
		return err
	}
	art := artifact.Artifact{ArtifactType: LockArtifactType, Layers: []artifact.Blob{
		{MediaType: LockArtifactType, Data: data}, {MediaType: sign.BundleMediaType, Data: bundle}}}
	desc, err := art.Push(ctx, repo, "", r.ropts...)
	if err != nil {
		return fmt.Errorf("publishing the lock: %w", err)
	}
	r.lockArtifact = repo.Digest(desc.Digest.String())
	return nil
}

func (r *run) verify(ctx context.Context) error {
	vo := r.opts.Verify
	vo.Expect = r.lock.Signer
	vo.Remote = r.ropts
	lockBytes, err := os.ReadFile(r.res.LockPath)
	if err != nil {
		return err
	}
	bundle, err := os.ReadFile(r.res.BundlePath)
	if err != nil {
		return err
	}
	l, err := verify.Lock(ctx, lockBytes, bundle, vo)
	if err != nil {
		return err
	}
	res, err := verify.Artifacts(ctx, l, vo)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.log, "    %d artifacts verified against the release signer\n", len(res.Checked))
	return nil
}

func (r *run) page(context.Context) error {
	return page.Write(filepath.Join(r.opts.OutDir, "page"), r.lock, page.Options{SBOMBaseURL: "../sbom/", LockRef: r.res.LockRef})
}

// Package pipeline runs a whole release: build the controller for every
// platform, assemble both image variants, generate SBOMs, push by digest,
// scan and gate on the vulnerability policy, and only then tag, sign, attest,
// write and sign the release lock, verify everything as a user would, and
// render the versions page. It is the same code locally (a loopback
// registry, a generated key) and in GitHub Actions (keyless).
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/internal/image"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/release/provenance"
	"github.com/reloader-dev/reloader/release/security"
	"github.com/reloader-dev/reloader/release/support"
	"github.com/reloader-dev/reloader/release/verify"
	"github.com/reloader-dev/reloader/sbom"
)

// ScanOptions configures the vulnerability gate.
type ScanOptions struct {
	Trivy gate.TrivyOptions
	// PolicyPath is the release policy file; "" is the one built into the
	// binary (release/gate/release-policy.yaml as it was built).
	PolicyPath string
	// MaxDBAge, when above zero, refuses a scan with Trivy.SkipDBUpdate
	// whose database was built longer than this before Now (see dbage.go).
	MaxDBAge time.Duration
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
	// SupportFile and AdvisoriesDir override the checkout's
	// release/support.yaml and release/advisories, which the lock records.
	SupportFile, AdvisoriesDir string
	// SecurityFile overrides the checkout's release/security.yaml: the
	// producer and its security contact, which the SBOMs name and the
	// release publishes as security.txt.
	SecurityFile string
	// StampPackage holds Version/Commit/Date; default build.BuildInfoPackage.
	StampPackage string

	// Registry is the repository prefix, e.g. "ghcr.io/reloader-dev".
	Registry string
	// StandardName and UBIName are the image repositories under Registry.
	StandardName, UBIName string
	// UBIBase is the UBI base index as name@sha256:...; empty skips UBI.
	UBIBase string
	// LicenseFiles are shipped under /licenses in every variant.
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
	// SignatureFormat is the form of a key-signed release's signatures and
	// attestations: Sigstore bundle referrers, cosign .sig/.att tags, or
	// both (reloader-release's default). The zero value is the signer's
	// own: tags for a key, bundles for keyless (see sign.Format.For).
	SignatureFormat sign.Format
	// BuilderID is the provenance's builder: the release workflow of a
	// keyless release (required with NewSigner); default the keyless
	// Signer's identity, or provenance.LocalBuilder.
	BuilderID string
	// Verify configures the final verification (trust root for keyless);
	// the expected signer is always the Signer's identity.
	Verify verify.Options
	// Scan is the vulnerability gate, run on the images in a local OCI
	// layout before anything is pushed. Nil needs NoScan.
	Scan *ScanOptions
	// NoScan releases without a scan, explicitly: the lock says the
	// release is unscanned, the versions page says so, and reloader-mirror
	// refuses it unless told to allow unscanned releases.
	NoScan bool
	// Platforms restricts the release to these platforms (nil: every
	// platform each variant ships for); see ParsePlatforms.
	Platforms []v1.Platform
	// FIPSPlatforms restricts the -fips variants further (nil: every FIPS
	// platform among Platforms; empty: no -fips variant, as a rebuild of
	// a release made before them). Only tests and rebuilds set it: a
	// release always ships its FIPS images.
	FIPSPlatforms []v1.Platform
	// GOFIPS140 is the Go Cryptographic Module the -fips variants link
	// (default DefaultGOFIPS140); a rebuild takes the version the release's
	// provenance records.
	GOFIPS140 string
	// BuildFlags are the go build flags besides -ldflags (nil:
	// build.Flags); a rebuild takes those the release's provenance records.
	BuildFlags []string

	// FromBuild is the output directory of a build stage (see Build),
	// whose images Run releases instead of building its own; Built is the
	// record that stage reported, the only thing Run takes from it besides
	// content that hashes to its digests. Empty: Run runs Build itself.
	FromBuild string
	Built     *BuildRecord

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
	Gate       *gate.Result
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
	images []*builtImage
	// layout is the local OCI layout holding every image and index.
	layout string
	// imageByDigest finds a built image by its manifest digest.
	imageByDigest map[string]*builtImage
	indexes       []*builtIndex
	// provenance is the SLSA predicate of each image and index, by digest.
	provenance map[string][]byte
	// provSummaries are the same, summarised for the versions page.
	provSummaries map[string]provenance.Summary
	// support and advisories are what recordSupport put in the lock.
	support    *support.Table
	advisories []*support.Advisory
	// security is the declared producer and security contact.
	security *security.Config
	// csaf links the signed CSAF documents publishCSAF wrote next to the
	// versions page.
	csaf csafLinks
	// lockArtifact is the lock's OCI artifact, pushed by digest.
	lockArtifact name.Digest
	// vex is the OpenVEX document of the release's exceptions, attested
	// on every image and index (vex.go); nil when there are none.
	vex []byte
	// signedReview is the procurement review attested on every index
	// (signedreview.go), made when signing starts.
	signedReview *signedReview
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

// step is one step of a release: each is in its own file, and runs only
// after every earlier step succeeded.
type step struct {
	name string
	run  func(*run, context.Context) error
}

// steps is the release, in order. The images are judged in a local OCI
// layout: nothing reaches a registry before the gate has passed, and
// nothing is tagged before the whole release verified as users verify it.
func steps() []step {
	return []step{
		{"record the support table and advisories", (*run).recordSupport},
		{"take the build's images by digest", (*run).loadBuild},
		{"generate SBOMs", (*run).generateSBOMs},
		{"generate provenance", (*run).generateProvenance},
		{"write the OCI layout", (*run).writeLayout},
		{"vulnerability gate", (*run).gate},
		{"push by digest", (*run).push},
		{"publish SBOMs and charts", (*run).publishArtifacts},
		{"write the OpenVEX document", (*run).prepareVEX},
		{"sign and attest", (*run).sign},
		{"write and sign the lock", (*run).writeLock},
		{"verify offline", (*run).verify},
		{"publish tags", (*run).tag},
		{"write and sign the CSAF documents", (*run).publishCSAF},
		{"versions page", (*run).page},
	}
}

// Run performs the release. On any failure nothing is tagged or signed
// beyond what earlier steps did, and the error names the step.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	if _, err := opts.shippedTable(); err != nil {
		return nil, err
	}
	var buildSteps []Step
	if opts.FromBuild == "" {
		// The same two stages as the release workflow's two jobs, with
		// the layout between them read back as the signing job reads it.
		start := time.Now()
		bo := opts
		bo.OutDir = filepath.Join(opts.OutDir, "build")
		rec, err := Build(ctx, bo)
		if err != nil {
			return nil, err
		}
		opts.FromBuild, opts.Built = bo.OutDir, rec
		buildSteps = append(buildSteps, Step{Name: "build stage", Duration: time.Since(start)})
	}
	r := newRun(ctx, opts)
	r.res.Steps = buildSteps
	r.lock = &release.Lock{Schema: release.LockSchema, Version: opts.Version, Source: opts.Source,
		Commit: opts.Commit, Created: opts.Created.UTC()}
	for _, s := range steps() {
		start := time.Now()
		fmt.Fprintf(r.log, "==> %s\n", s.name)
		if err := s.run(r, ctx); err != nil {
			return r.res, fmt.Errorf("release %s: %s: %w", opts.Version, s.name, err)
		}
		r.res.Steps = append(r.res.Steps, Step{Name: s.name, Duration: time.Since(start)})
	}
	r.res.Lock = r.lock
	return r.res, nil
}

func (o *Options) check() error {
	errs := o.buildProblems()
	if (o.FromBuild == "") != (o.Built == nil) || (o.Built != nil && len(o.Built.Indexes) == 0) {
		errs = append(errs, errors.New("a release from a build stage needs its directory and the indexes it reported"))
	}
	if (o.Signer == nil) == (o.NewSigner == nil) {
		errs = append(errs, errors.New("give exactly one of Signer and NewSigner"))
	}
	if o.NewSigner != nil && o.BuilderID == "" {
		errs = append(errs, errors.New("a keyless release needs its builder id (the release workflow) for the provenance"))
	}
	if o.Scan == nil && !o.NoScan {
		errs = append(errs, errors.New("no vulnerability scan configured: give a scanner, or release unscanned explicitly (--no-scan)"))
	}
	if o.Scan != nil && o.NoScan {
		errs = append(errs, errors.New("a scanner and --no-scan: choose one"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("release options: %w", err)
	}
	return nil
}

func (r *run) meta(name string) image.Metadata {
	o := r.opts
	return image.Metadata{Name: name, Version: o.Version, Commit: o.Commit, Source: o.Source, Licenses: o.Licenses,
		Vendor: o.Vendor, Summary: o.Summary, Description: o.Description, Created: o.Created}
}

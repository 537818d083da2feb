// Package releasetest publishes releases for tests with the release
// pipeline itself (publish/pipeline): the same build, image, SBOM, chart,
// signing, attestation, lock, verification and tagging steps a real release
// runs, in a fast mode. The fast mode builds a small stand-in program
// (internal/smallapp) through the pipeline's own build step for one
// platform, uses a stand-in UBI base, publishes the repository's real
// charts, and releases unscanned (--no-scan, so the lock says so and
// reloader-mirror needs --allow-unscanned). Keyless releases are signed with
// certificates from a sigstore-go VirtualSigstore, optionally with entries
// in its transparency log.
//
// It is for tests only. There is no second release producer: what a test
// mirrors is what the pipeline publishes.
package releasetest

import (
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/root"
	sigsign "github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/reloader-dev/reloader/publish/internal/artifact"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/provenance"
	"github.com/reloader-dev/reloader/release/verify"
	"github.com/reloader-dev/reloader/test/virtualsigstore"
)

// SmallApp is the stand-in main package the fast mode builds, relative to
// the module root.
const SmallApp = "./publish/releasetest/internal/smallapp"

// Signer signs a test release with a cosign key (KeyPath), or keyless with
// certificates for Identity and Issuer, timestamped by a VirtualSigstore.
type Signer struct {
	KeyPath string
	pub     []byte

	Sigstore *ca.VirtualSigstore
	// GitHub issues the keyless certificates as GitHub's Fulcio does, with
	// the source repository extensions naming the release's repository,
	// commit and tag (NewKeylessSigner sets it). Without it the
	// VirtualSigstore's own CA issues them bare, as a private CA would:
	// consumers refuse such a release unless --allow-unbound-certificate.
	GitHub           *virtualsigstore.GitHubCA
	Identity, Issuer string
	// Tlog records every keyless signature in the VirtualSigstore's
	// transparency log, as public Sigstore does; without it bundles carry
	// only a timestamp.
	Tlog bool
}

// NewKeySigner generates a cosign key pair in dir, as `reloader-release
// local` does.
func NewKeySigner(dir string) (Signer, error) {
	priv, pub, err := sign.GenerateKey(dir, nil)
	if err != nil {
		return Signer{}, err
	}
	b, err := os.ReadFile(pub)
	if err != nil {
		return Signer{}, err
	}
	return Signer{KeyPath: priv, pub: b}, nil
}

// NewKeylessSigner is a keyless signer whose certificates a GitHub-like CA
// issues for identity and issuer, timestamped (and logged, with Tlog) by vs.
func NewKeylessSigner(vs *ca.VirtualSigstore, identity, issuer string) (Signer, error) {
	g, err := virtualsigstore.NewGitHubCA(vs)
	if err != nil {
		return Signer{}, err
	}
	return Signer{Sigstore: vs, GitHub: g, Identity: identity, Issuer: issuer}, nil
}

// WithIdentity is s signing as another identity, from the same CAs: a
// signer the same trusted root anchors whom a policy must still refuse.
func (s Signer) WithIdentity(identity string) Signer {
	s.Identity = identity
	return s
}

// PublicKeyPEM is the signer's public key (key-based only).
func (s Signer) PublicKeyPEM() []byte { return s.pub }

// PublicKey is the signer's public key (key-based only).
func (s Signer) PublicKey() (crypto.PublicKey, error) {
	return cryptoutils.UnmarshalPEMToPublicKey(s.pub)
}

// TrustedRootJSON is the trusted_root.json of the signer's VirtualSigstore.
func (s Signer) TrustedRootJSON() ([]byte, error) {
	cas := s.Sigstore.FulcioCertificateAuthorities()
	if s.GitHub != nil {
		cas = append(cas, s.GitHub.CertificateAuthorities()...)
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, cas,
		s.Sigstore.CTLogs(), s.Sigstore.TimestampingAuthorities(), s.Sigstore.RekorLogs())
	if err != nil {
		return nil, fmt.Errorf("building the trusted root: %w", err)
	}
	return tr.MarshalJSON()
}

// TrustedRoot is TrustedRootJSON as users load it: from the JSON file,
// which names the log as the log entries do.
func (s Signer) TrustedRoot() (*root.TrustedRoot, error) {
	b, err := s.TrustedRootJSON()
	if err != nil {
		return nil, err
	}
	return root.NewTrustedRootFromJSON(b)
}

// Expect is the signer a verifier must expect.
func (s Signer) Expect() release.Signer {
	if s.Sigstore == nil {
		return release.Signer{PublicKey: string(s.pub)}
	}
	return release.Signer{Identity: s.Identity, Issuer: s.Issuer}
}

// New makes a signer for content outside a release: a keyless one's
// certificate names no source repository, commit or tag.
func (s Signer) New(ctx context.Context) (*sign.Signer, error) {
	return s.NewFor(ctx, "", "", "")
}

// NewFor makes the pipeline's signer for a release of source at commit,
// tagged version; keyless ones get a fresh certificate naming them, as the
// product's keyless signer does when signing starts.
func (s Signer) NewFor(_ context.Context, source, commit, version string) (*sign.Signer, error) {
	if s.Sigstore == nil {
		return sign.FromKey(sign.KeyOptions{PrivateKeyPath: s.KeyPath})
	}
	var logs []sigsign.Transparency
	if s.Tlog {
		logs = []sigsign.Transparency{virtualRekor{s.Sigstore}}
	}
	if s.GitHub == nil {
		return virtualsigstore.Signer(s.Sigstore, s.Identity, s.Issuer, logs...)
	}
	src := virtualsigstore.Source{}
	if version != "" {
		src = virtualsigstore.SourceOf(source, commit, version)
	}
	return s.GitHub.Signer(s.Identity, s.Issuer, src, logs...)
}

// builderID is what the pipeline records as the provenance's builder: the
// release workflow (the certificate identity) for keyless signers, as a
// real release does, else the local pipeline.
func (s Signer) builderID() string {
	if s.Sigstore != nil {
		return s.Identity
	}
	return provenance.LocalBuilder
}

// SignLock signs lock bytes as the pipeline signs the lock, for tests that
// rewrite a lock.
func (s Signer) SignLock(ctx context.Context, lockJSON []byte) ([]byte, error) {
	var l struct{ Source, Commit, Version string }
	if err := json.Unmarshal(lockJSON, &l); err != nil {
		return nil, fmt.Errorf("reading the lock to sign: %w", err)
	}
	sg, err := s.NewFor(ctx, l.Source, l.Commit, l.Version)
	if err != nil {
		return nil, err
	}
	return sg.Blob(ctx, lockJSON)
}

// verifyOptions are the pipeline's own final verification: the test CA
// logs to no CT log, and without Tlog the bundles carry no log entry.
func (s Signer) verifyOptions() (verify.Options, error) {
	if s.Sigstore == nil {
		return verify.Options{}, nil
	}
	tr, err := s.TrustedRoot()
	if err != nil {
		return verify.Options{}, err
	}
	return verify.Options{TrustedRoot: tr, IgnoreSCT: true, IgnoreTlog: !s.Tlog, AllowUnboundCertificate: s.GitHub == nil}, nil
}

// Options configures Publish.
type Options struct {
	// Registry is "127.0.0.1:port".
	Registry string
	// Prefix is the namespace below the registry (default "reloader-dev").
	Prefix string
	// Version is the release version (default "v1.2.3").
	Version string
	// Seed is stamped into the binary as the commit: releases with the
	// same seed and version have the same image digests, others differ.
	Seed uint64
	// MainPackage is built (default SmallApp); "./cmd/reloader" releases
	// the real controller.
	MainPackage string
	// Platforms (default linux/amd64 only); the -fips variants are built
	// for the FIPS platforms among them, or FIPSPlatforms when set.
	Platforms, FIPSPlatforms []v1.Platform
	// Signer signs the lock and everything else.
	Signer Signer
	// SignatureFormat is the pipeline's (zero: the signer's own form).
	SignatureFormat sign.Format
	// SignaturesBy, when set, signs the release (artifacts and lock) with
	// another signer and then re-signs only the lock, naming Signer, with
	// Signer: a release whose artifacts an impostor signed.
	SignaturesBy *Signer
	// Created is the release time (default 2026-01-02T03:04:05Z).
	Created time.Time
	// Remote are extra registry options (auth, transport).
	Remote []remote.Option
	// SupportFile and AdvisoriesDir replace the checkout's support table
	// and advisories, which the lock records (see pipeline.Options).
	// Without SupportFile the release ships WriteSupportTable's table for
	// its own series, so any version a test cuts is listed.
	SupportFile, AdvisoriesDir string
	// Scan, when set, runs the pipeline's real vulnerability gate (Trivy,
	// the release policy) instead of releasing unscanned; the gate judges
	// exceptions at Created, the day the release is cut.
	Scan *pipeline.ScanOptions
	// PadBytes, when above zero, adds about this many bytes of random
	// data to the release, as layers of the stand-in UBI base split
	// between its platforms (padding.go): a release the size of one on a
	// full base image, of the same shape, for benchmarks.
	PadBytes int64
	// PadSeed, when set, seeds the padding instead of Seed: releases with
	// the same PadSeed share their padded base, as consecutive releases on
	// an unchanged base image do.
	PadSeed uint64
	// OutDir, when set, receives what the pipeline writes (the lock, SBOM
	// files, the versions page) and is kept; by default a temporary
	// directory is used and removed.
	OutDir string
}

// Release is what Publish produced.
type Release struct {
	Lock       *release.Lock
	LockJSON   []byte
	LockBundle []byte
	// LockRef is where the lock artifact was pushed ("host/repo:version").
	LockRef string
	// Indexes maps image name to its index digest, Charts chart name to
	// the chart's; Chart is the standard variant's chart.
	Indexes map[string]string
	Charts  map[string]string
	Chart   string
	// Steps are the pipeline's step timings.
	Steps []pipeline.Step
}

var moduleRoot = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("finding the module root: not inside a module")
	}
	return filepath.Dir(gomod), nil
})

// Publish runs the release pipeline in its fast mode into opts.Registry.
func Publish(ctx context.Context, opts Options) (*Release, error) {
	if opts.Prefix == "" {
		opts.Prefix = "reloader-dev"
	}
	if opts.Version == "" {
		opts.Version = "v1.2.3"
	}
	if opts.MainPackage == "" {
		opts.MainPackage = SmallApp
	}
	if opts.Platforms == nil {
		opts.Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}}
	}
	if opts.Created.IsZero() {
		opts.Created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	}
	mod, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	out := opts.OutDir
	if out == "" {
		dir, err := os.MkdirTemp("", "releasetest-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		out = dir
	}
	if opts.SupportFile == "" {
		dir, err := os.MkdirTemp("", "releasetest-support-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		if opts.SupportFile, err = WriteSupportTable(dir, opts.Created, opts.Version); err != nil {
			return nil, err
		}
	}
	ropts := append([]remote.Option{remote.WithContext(ctx)}, opts.Remote...)
	padSeed := opts.Seed
	if opts.PadSeed != 0 {
		padSeed = opts.PadSeed
	}
	base, err := pushBase(ctx, opts.Registry+"/stand-in/ubi-minimal", opts.Created, padSeed, opts.PadBytes, ropts...)
	if err != nil {
		return nil, err
	}
	signer := opts.Signer
	if opts.SignaturesBy != nil {
		signer = *opts.SignaturesBy
	}
	vopts, err := signer.verifyOptions()
	if err != nil {
		return nil, err
	}
	vopts.Remote = ropts
	source, commit := "https://github.com/reloader-dev/reloader", fmt.Sprintf("%040x", opts.Seed)
	var charts []string
	for _, c := range []string{"reloader", "reloader-ubi", "reloader-lib"} {
		charts = append(charts, filepath.Join(mod, "charts", c))
	}
	res, err := pipeline.Run(ctx, pipeline.Options{
		Version: opts.Version, Commit: commit, Source: source,
		Created: opts.Created, Now: opts.Created, ModuleDir: mod, MainPackage: opts.MainPackage,
		SupportFile: opts.SupportFile, AdvisoriesDir: opts.AdvisoriesDir,
		Registry: opts.Registry + "/" + opts.Prefix, StandardName: "reloader", UBIName: "reloader-ubi", UBIBase: base,
		Licenses: "Apache-2.0", LicenseFiles: []string{filepath.Join(mod, "LICENSE")},
		ChartDirs: charts, OutDir: out, BuilderID: signer.builderID(), Verify: vopts, NoScan: opts.Scan == nil, SignatureFormat: opts.SignatureFormat, Scan: opts.Scan, Platforms: opts.Platforms, FIPSPlatforms: opts.FIPSPlatforms,
		Remote: opts.Remote,
		NewSigner: func(ctx context.Context) (*sign.Signer, error) {
			return signer.NewFor(ctx, source, commit, opts.Version)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("test release: %w", err)
	}
	rel := &Release{Lock: res.Lock, LockRef: res.LockRef, Steps: res.Steps, Indexes: map[string]string{}, Charts: map[string]string{}}
	if rel.LockJSON, err = os.ReadFile(res.LockPath); err != nil {
		return nil, err
	}
	if rel.LockBundle, err = os.ReadFile(res.BundlePath); err != nil {
		return nil, err
	}
	if opts.SignaturesBy != nil {
		if err := rel.resign(ctx, opts.Signer, ropts); err != nil {
			return nil, err
		}
	}
	for _, a := range rel.Lock.Artifacts {
		switch a.Kind {
		case release.KindImageIndex:
			rel.Indexes[a.Name] = a.Digest
		case release.KindChart:
			rel.Charts[a.Name] = a.Digest
		}
	}
	rel.Chart = rel.Charts["reloader"]
	return rel, nil
}

// resign makes the lock name s and signs it with s, and publishes it where
// the pipeline published the lock.
func (rel *Release) resign(ctx context.Context, s Signer, ropts []remote.Option) error {
	rel.Lock.Signer = s.Expect()
	data, err := rel.Lock.Marshal()
	if err != nil {
		return err
	}
	b, err := s.SignLock(ctx, data)
	if err != nil {
		return err
	}
	rel.LockJSON, rel.LockBundle = data, b
	return PushLock(ctx, rel.LockRef, data, b, ropts...)
}

// PushLock publishes a lock and its bundle as the pipeline's lock artifact
// at ref (repo:tag).
func PushLock(ctx context.Context, ref string, lockJSON, bundle []byte, ropts ...remote.Option) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return err
	}
	art := artifact.Artifact{ArtifactType: release.LockArtifactType, Layers: []artifact.Blob{
		{MediaType: release.LockArtifactType, Data: lockJSON}, {MediaType: release.BundleMediaType, Data: bundle}}}
	if _, err := art.Push(ctx, tag.Context(), tag.TagStr(), ropts...); err != nil {
		return fmt.Errorf("publishing the lock at %s: %w", ref, err)
	}
	return nil
}

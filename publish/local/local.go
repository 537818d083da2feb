// Package local runs a complete release on this machine: a registry on
// 127.0.0.1 (go-containerregistry's, in process, with the referrers API), a
// freshly generated cosign key, a stand-in UBI base image, and the same
// pipeline CI runs. It backs `reloader-release local` and `make
// release-local`, and the tests that release twice and tamper.
package local

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/reloader-dev/reloader/internal/image"
	"github.com/reloader-dev/reloader/publish/internal/rpmdb"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/publish/signkey"
	"github.com/reloader-dev/reloader/release/gate"
)

// Options configures a local release.
type Options struct {
	// ModuleDir is the checkout (default "."); MainPackage the controller.
	ModuleDir, MainPackage, StampPackage string
	// OutDir receives everything, including keys/ with the generated key.
	OutDir string
	// Registry is an existing registry host ("127.0.0.1:5000"); empty
	// starts one in process for the duration of the run.
	Registry string
	// KeyPath uses an existing key instead of generating one: a cosign
	// key file, which KeyPassword decrypts, or a pkcs11: or KMS URI (see
	// publish/signkey), whose public key is written to keys/cosign.pub.
	KeyPath     string
	KeyPassword []byte
	// UBIBase is a real UBI base (name@sha256); empty builds a stand-in.
	UBIBase string
	// Trivy is the scanner; its Binary is required unless NoScan.
	Trivy gate.TrivyOptions
	// NoScan releases unscanned, and the lock says so.
	NoScan bool
	// Platforms restricts the platforms (nil: all); see
	// pipeline.ParsePlatforms.
	Platforms []v1.Platform
	// FIPSPlatforms restricts the -fips variants (see pipeline.Options),
	// for tests that need them on fewer platforms than the others.
	FIPSPlatforms []v1.Platform
	PolicyPath    string
	// SupportFile is the support table the release ships (default the
	// checkout's release/support.yaml); it must list Version's series.
	SupportFile string
	Version     string
	Commit      string
	Created     time.Time
	ChartDirs   []string
	LicenseFile string
	Log         io.Writer
}

// Result is the pipeline's result plus where things are.
type Result struct {
	*pipeline.Result
	Registry   string
	PublicKey  string
	Total      time.Duration
	StandInUBI bool
}

// Run performs the release. The in-process registry, if started, stops
// when Run returns; the lock and the files in OutDir remain.
func Run(ctx context.Context, opts Options) (*Result, error) {
	start := time.Now()
	if opts.ModuleDir == "" {
		opts.ModuleDir = "."
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("local release: %w", err)
	}
	host := opts.Registry
	if host == "" {
		h, stop, err := StartRegistry()
		if err != nil {
			return nil, err
		}
		defer stop()
		host = h
	}
	signer, pubPath, closeKey, err := openSigner(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("local release: %w", err)
	}
	defer closeKey()
	ropts := []remote.Option{remote.WithContext(ctx)}
	res := &Result{Registry: host, PublicKey: pubPath}
	ubiBase := opts.UBIBase
	if ubiBase == "" {
		res.StandInUBI = true
		if ubiBase, err = PushStandInBase(ctx, host+"/stand-in/ubi-minimal", opts.Created, ropts...); err != nil {
			return nil, err
		}
	}
	var scan *pipeline.ScanOptions
	if !opts.NoScan {
		t := opts.Trivy
		t.Insecure = true
		scan = &pipeline.ScanOptions{Trivy: t, PolicyPath: opts.PolicyPath}
	}
	var licenses []string
	if opts.LicenseFile != "" {
		licenses = []string{opts.LicenseFile}
	}
	pres, err := pipeline.Run(ctx, pipeline.Options{
		Version: opts.Version, Commit: opts.Commit, Source: "https://github.com/reloader-dev/reloader",
		Created: opts.Created, Now: time.Now(),
		ModuleDir: opts.ModuleDir, MainPackage: opts.MainPackage, StampPackage: opts.StampPackage, SupportFile: opts.SupportFile,
		Registry: host + "/reloader-dev", StandardName: "reloader", UBIName: "reloader-ubi", UBIBase: ubiBase,
		LicenseFiles: licenses, Licenses: "Apache-2.0", Vendor: "Reloader contributors",
		Summary:     "Reloads Kubernetes workloads when their ConfigMaps and Secrets change",
		Description: "Reloader watches ConfigMaps and Secrets and rolls the Deployments, StatefulSets and DaemonSets that use them.",
		ChartDirs:   opts.ChartDirs, OutDir: opts.OutDir, Signer: signer, Scan: scan, NoScan: opts.NoScan, Platforms: opts.Platforms,
		FIPSPlatforms: opts.FIPSPlatforms, Remote: ropts, Log: opts.Log,
	})
	res.Result = pres
	res.Total = time.Since(start)
	if err != nil {
		return res, err
	}
	return res, nil
}

// openSigner opens the key KeyPath names, or generates a cosign key pair
// under OutDir/keys. It returns where the public key was written ("" for
// a key file the caller already has) and what closes the key.
func openSigner(ctx context.Context, opts Options) (*sign.Signer, string, func(), error) {
	ref, pubPath := opts.KeyPath, ""
	dir := filepath.Join(opts.OutDir, "keys")
	if ref == "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, "", nil, err
		}
		var err error
		if ref, pubPath, err = sign.GenerateKey(dir, opts.KeyPassword); err != nil {
			return nil, "", nil, err
		}
	}
	key, err := signkey.Open(ctx, signkey.Options{Ref: ref, Password: opts.KeyPassword})
	if err != nil {
		return nil, "", nil, err
	}
	signer, err := sign.FromSignerVerifier(key.SignerVerifier)
	if err != nil {
		key.Close()
		return nil, "", nil, err
	}
	if key.Kind != signkey.File {
		// Verifiers need the public half of a key they cannot read.
		pubPath = filepath.Join(dir, "cosign.pub")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			key.Close()
			return nil, "", nil, err
		}
		if err := os.WriteFile(pubPath, key.PublicKeyPEM, 0o644); err != nil {
			key.Close()
			return nil, "", nil, err
		}
	}
	return signer, pubPath, key.Close, nil
}

// StartRegistry serves go-containerregistry's registry (referrers API on)
// on a free 127.0.0.1 port and returns its host and a stop function.
func StartRegistry() (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("starting the local registry: %w", err)
	}
	h := ggcrregistry.New(ggcrregistry.WithReferrersSupport(true), ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return l.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// StandInBase builds a small multi-platform image that stands in for UBI
// minimal where the real one cannot be pulled (tests, air-gapped laptops):
// an os-release saying what it is, the nonroot user, CA roots, and the
// labels a UBI base carries, so the UBI build path is fully exercised.
func StandInBase(ctx context.Context, created time.Time) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range pipeline.UBIPlatforms() {
		// A real RPM database, so syft catalogues the base's packages and
		// the review shows them with their licences, as for UBI.
		db, err := rpmdb.SQLite(ctx, standInPackages(p), "")
		if err != nil {
			return nil, fmt.Errorf("building the stand-in base: %w", err)
		}
		files := append(image.RootFSFiles(),
			image.File{Path: "/etc/os-release", Mode: 0o644, Data: []byte("NAME=\"UBI stand-in\"\nID=\"reloader-ubi-stand-in\"\nVERSION_ID=\"9\"\nPRETTY_NAME=\"Stand-in for Red Hat Universal Base Image 9 Minimal (test only)\"\n" +
				// As UBI's: where the distribution is reached, which the
				// SBOMs name as its packages' creator.
				"HOME_URL=\"https://www.redhat.com/\"\nBUG_REPORT_URL=\"https://issues.redhat.com/\"\n")},
			image.File{Path: rpmdb.Path, Mode: 0o644, Data: db})
		l, err := image.Layer(files, created)
		if err != nil {
			return nil, fmt.Errorf("building the stand-in base: %w", err)
		}
		img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
		img, err = mutate.Append(img, mutate.Addendum{Layer: l, MediaType: types.OCILayer,
			History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "stand-in base"}})
		if err != nil {
			return nil, fmt.Errorf("building the stand-in base: %w", err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
		cf.Created = v1.Time{Time: created}
		cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "container=oci"}
		cf.Config.Cmd = []string{"/bin/bash"}
		cf.Config.Labels = map[string]string{"name": "ubi9-minimal-stand-in", "vendor": "Red Hat, Inc. (stand-in)", "version": "9.99"}
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return nil, err
		}
		pp := p
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &pp}})
	}
	return idx, nil
}

// standInPackages are the stand-in base's RPMs for platform p: a few of
// ubi-minimal's, with made-up releases and the licences as UBI 9 states them.
func standInPackages(p v1.Platform) []rpmdb.Package {
	arch := map[string]string{"amd64": "x86_64", "arm64": "aarch64", "ppc64le": "ppc64le", "s390x": "s390x"}[p.Architecture]
	if arch == "" {
		arch = p.Architecture
	}
	const vendor = "Red Hat, Inc. (stand-in)"
	return []rpmdb.Package{
		{Name: "bash", Version: "5.1.8", Release: "9.el9", Arch: arch, License: "GPL-3.0-or-later", Vendor: vendor, SourceRPM: "bash-5.1.8-9.el9.src.rpm", Size: 7738634, Summary: "The GNU Bourne Again shell"},
		{Name: "ca-certificates", Version: "2024.2.69_v8.0.303", Release: "91.4.el9_4", Arch: "noarch", License: "MIT AND GPL-2.0-or-later", Vendor: vendor, SourceRPM: "ca-certificates-2024.2.69_v8.0.303-91.4.el9_4.src.rpm", Size: 2488087, Summary: "The Mozilla CA root certificate bundle"},
		{Name: "glibc", Version: "2.34", Release: "125.el9_5.1", Arch: arch, License: "LGPL-2.1-or-later AND GPL-2.0-or-later", Vendor: vendor, SourceRPM: "glibc-2.34-125.el9_5.1.src.rpm", Size: 6391345, Summary: "The GNU libc libraries"},
		{Name: "tzdata", Version: "2025a", Release: "1.el9", Arch: "noarch", License: "LicenseRef-Fedora-Public-Domain", Vendor: vendor, SourceRPM: "tzdata-2025a-1.el9.src.rpm", Size: 1813284, Summary: "Timezone data"},
	}
}

// PushStandInBase pushes StandInBase to repo and returns repo@digest.
func PushStandInBase(ctx context.Context, repo string, created time.Time, opts ...remote.Option) (string, error) {
	idx, err := StandInBase(ctx, created)
	if err != nil {
		return "", err
	}
	d, err := idx.Digest()
	if err != nil {
		return "", err
	}
	ref, err := name.NewDigest(repo + "@" + d.String())
	if err != nil {
		return "", err
	}
	if err := remote.WriteIndex(ref, idx, append([]remote.Option{remote.WithContext(ctx)}, opts...)...); err != nil {
		return "", fmt.Errorf("pushing the stand-in UBI base to %s: %w", repo, err)
	}
	return ref.String(), nil
}

// Package build compiles the controller for the release platforms the same
// way every time: static (CGO_ENABLED=0), -trimpath, no build id and no VCS
// stamp of the checkout's state, version and commit set with -X. Given the
// same source and Go toolchain, two builds produce the same bytes, which is
// what makes the image digests reproducible.
package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// BuildInfoPackage is where the controller keeps its stamped version.
const BuildInfoPackage = "github.com/reloader-dev/reloader/controller/buildinfo"

// Options configures Binaries.
type Options struct {
	// MainPackage is the package to build, e.g. "./cmd/reloader".
	MainPackage string
	// Dir is the module directory the package path is relative to.
	Dir string
	// OutDir receives one binary per platform.
	OutDir string
	// BinaryName is the file name inside the image, e.g. "reloader".
	BinaryName string
	// Platforms to build for.
	Platforms []v1.Platform
	// Version, Commit and Date are stamped into StampPackage.Version etc.
	Version, Commit string
	Date            time.Time
	// StampPackage is the import path holding the Version, Commit and Date
	// variables; defaults to BuildInfoPackage.
	StampPackage string
	// GoBinary is the go command; defaults to "go" in PATH.
	GoBinary string
	// GOFIPS140 builds against that frozen Go Cryptographic Module
	// ("certified", or the version it names, e.g. "v1.0.0-c2097c7c");
	// empty builds against the toolchain's own crypto, as Go's default is.
	GOFIPS140 string
}

// Binary is one compiled controller.
type Binary struct {
	Platform v1.Platform
	Path     string
}

// Binaries compiles the main package once per platform, sequentially: the
// builds share the build cache, and on small CI machines running them in
// parallel only adds memory pressure.
func Binaries(ctx context.Context, opts Options) ([]Binary, error) {
	if opts.MainPackage == "" || opts.BinaryName == "" || opts.OutDir == "" {
		return nil, errors.New("building the controller: MainPackage, BinaryName and OutDir are required")
	}
	gobin := opts.GoBinary
	if gobin == "" {
		gobin = "go"
	}
	ldflags := LDFlags(opts)
	var out []Binary
	for _, p := range opts.Platforms {
		dir := filepath.Join(opts.OutDir, PlatformDir(p))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("building %s for %s: %w", opts.MainPackage, p.String(), err)
		}
		path := filepath.Join(dir, opts.BinaryName)
		cmd := exec.CommandContext(ctx, gobin, "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", path, opts.MainPackage)
		cmd.Dir = opts.Dir
		cmd.Env = buildEnv(p, opts.GOFIPS140)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("building %s for %s: %w\n%s", opts.MainPackage, p.String(), err, stderr.String())
		}
		out = append(out, Binary{Platform: p, Path: path})
	}
	return out, nil
}

// LDFlags is the -ldflags value of a build. Go does not record it in the
// binary's build information under -trimpath, so provenance takes it here.
func LDFlags(opts Options) string {
	stamp := opts.StampPackage
	if stamp == "" {
		stamp = BuildInfoPackage
	}
	return strings.Join([]string{
		"-s", "-w", "-buildid=",
		"-X", stamp + ".Version=" + opts.Version,
		"-X", stamp + ".Commit=" + opts.Commit,
		"-X", stamp + ".Date=" + opts.Date.UTC().Format(time.RFC3339),
	}, " ")
}

// buildEnv is the environment of one cross build. GOFLAGS from the caller is
// dropped so a developer's -race or -cover cannot leak into a release, and
// GOFIPS140 so only the FIPS variant links the FIPS module. The FIPS build's
// environment is reloadertest.FIPSBinary's (static, -trimpath, the same
// GOFIPS140), so on amd64 the two share every compile in the build cache.
func buildEnv(p v1.Platform, gofips140 string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOFLAGS", "GOOS", "GOARCH", "GOARM", "GOAMD64", "GOARM64", "CGO_ENABLED", "GOEXPERIMENT", "GOFIPS140":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	if gofips140 != "" {
		env = append(env, "GOFIPS140="+gofips140)
	}
	if p.Architecture == "arm" {
		v := strings.TrimPrefix(p.Variant, "v")
		if v == "" {
			v = "7"
		}
		env = append(env, "GOARM="+v)
	}
	return env
}

// PlatformDir is a file-system-safe name of a platform: "linux-arm-v7".
func PlatformDir(p v1.Platform) string {
	return strings.ReplaceAll(p.String(), "/", "-")
}

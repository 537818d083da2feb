// Package build compiles the controller for the release platforms the same
// way every time: static (CGO_ENABLED=0), with the go build flags of Flags
// (-trimpath, no VCS stamp of the checkout's state, the pure-Go resolver
// and user lookup, no DWARF), no build id, version and commit set with -X.
// Given the same source and Go toolchain, two builds produce the same
// bytes, which is what makes the image digests reproducible.
package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// BuildInfoPackage is where the controller keeps its stamped version.
const BuildInfoPackage = "github.com/reloader-dev/reloader/controller/buildinfo"

// Tags are the build tags of every static build: the pure-Go DNS resolver
// and user lookup, which a CGO_ENABLED=0 binary uses anyway. Naming them
// lets a cgo build (the PKCS#11 reloader-release) compile its other
// packages exactly as the static builds do: without the tags, cgo changes
// package net, and so every package above it.
const Tags = "netgo,osusergo"

// Flags returns the go build flags of a release build, and of every build
// that should share its compiles in the Go build cache (the tests, the tool
// sets, the Makefile's PLAIN_ENV; test/buildflags_test.go holds them to these).
// -gcflags=all=-dwarf=false: a release is linked with -s -w, so the DWARF
// the compiler would write is thrown away; not writing it takes 15% less
// compile CPU and leaves the code the same.
func Flags() []string {
	return []string{"-trimpath", "-buildvcs=false", "-tags=" + Tags, "-gcflags=all=-dwarf=false"}
}

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
	// Flags are the go build flags besides -ldflags and -o; nil is
	// Flags(). A rebuild passes those its release's provenance records.
	Flags []string
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
		args := append(append([]string{"build"}, opts.flags()...), "-ldflags", ldflags, "-o", path, opts.MainPackage)
		cmd := exec.CommandContext(ctx, gobin, args...)
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

// FlagsOf returns the go build flags a binary was built with, from its
// build information (settings), in the order of Flags: what a provenance
// records and a rebuild passes. Go records -trimpath, -tags and -gcflags
// but not -buildvcs=false; a binary without VCS settings was built with it.
func FlagsOf(settings []debug.BuildSetting) []string {
	var out []string
	vcs := false
	for _, s := range settings {
		vcs = vcs || strings.HasPrefix(s.Key, "vcs")
	}
	if setting(settings, "-trimpath") == "true" {
		out = append(out, "-trimpath")
	}
	if !vcs {
		out = append(out, "-buildvcs=false")
	}
	if tags := tagsGiven(settings); tags != "" {
		out = append(out, "-tags="+tags)
	}
	if v := setting(settings, "-gcflags"); v != "" {
		out = append(out, "-gcflags="+v)
	}
	return out
}

// tagsGiven is the -tags a binary records less the tag go adds itself for
// GOFIPS140 (fips140v1.0): a rebuild sets GOFIPS140, and passing the tag as
// well would be a build of another shape.
func tagsGiven(settings []debug.BuildSetting) string {
	tags := strings.Split(setting(settings, "-tags"), ",")
	if setting(settings, "GOFIPS140") != "" {
		tags = slices.DeleteFunc(tags, func(t string) bool { return strings.HasPrefix(t, "fips140v") })
	}
	return strings.Join(slices.DeleteFunc(tags, func(t string) bool { return t == "" }), ",")
}

// setting is the value of key in a binary's build settings, or "".
func setting(settings []debug.BuildSetting, key string) string {
	for _, s := range settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// tagsRE is what -tags may hold in a flag CheckFlags accepts.
var tagsRE = regexp.MustCompile(`^-tags=[A-Za-z0-9_.]+(,[A-Za-z0-9_.]+)*$`)

// CheckFlags refuses any go build flag but those a release build may have
// been made with (Flags, and the -trimpath and -buildvcs=false of releases
// before it): flags read from a provenance reach go build, and one such as
// -toolexec would run a program of the document's choosing.
func CheckFlags(flags []string) error {
	for _, f := range flags {
		switch {
		case f == "-trimpath", f == "-buildvcs=false", f == "-gcflags=all=-dwarf=false", tagsRE.MatchString(f):
		default:
			return fmt.Errorf("go build flag %q is not one a release is built with (-trimpath, -buildvcs=false, -tags=..., -gcflags=all=-dwarf=false)", f)
		}
	}
	return nil
}

func (o Options) flags() []string {
	if o.Flags == nil {
		return Flags()
	}
	return o.Flags
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
// environment is reloadertest.FIPSBinary's (static, the flags of Flags, the
// same GOFIPS140), so on amd64 the two share every compile in the build cache.
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

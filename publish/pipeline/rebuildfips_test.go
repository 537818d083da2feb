package pipeline

import (
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/release"
)

// A rebuild builds the -fips variants exactly where the lock lists them
// (nowhere for a release made before them), refuses a lock that names
// them otherwise than the pipeline does, and hands go build only a Go
// Cryptographic Module version from the provenance, never an alias or
// anything else a forged provenance might carry.
func TestARebuildTakesTheFIPSVariantsFromTheLockOrRefuses(t *testing.T) {
	img := func(name, variant, platform string) release.Artifact {
		return release.Artifact{Kind: release.KindImage, Name: name, Variant: variant, Platform: platform}
	}
	opts := Options{StandardName: "reloader", UBIName: "reloader-ubi"}
	if err := lockedFIPS(&opts, &release.Lock{}, []release.Artifact{img("reloader", VariantStandard, "linux/amd64")}, nil); err != nil ||
		opts.FIPSPlatforms == nil || len(opts.FIPSPlatforms) != 0 {
		t.Errorf("a lock without -fips images: platforms %v (nil: %v), %v; want none, explicitly", opts.FIPSPlatforms, opts.FIPSPlatforms == nil, err)
	}
	opts = Options{StandardName: "reloader", UBIName: "reloader-ubi", GOFIPS140: "v1.0.0-c2097c7c"}
	images := []release.Artifact{img("reloader-fips", VariantFIPS, "linux/arm64"), img("reloader-ubi-fips", VariantUBIFIPS, "linux/arm64"),
		img("reloader-fips", VariantFIPS, "linux/amd64")}
	if err := lockedFIPS(&opts, &release.Lock{}, images, nil); err != nil || platformList(opts.FIPSPlatforms) != "linux/arm64, linux/amd64" {
		t.Errorf("-fips images on two platforms: platforms %v, %v", opts.FIPSPlatforms, err)
	}
	opts = Options{StandardName: "reloader", UBIName: "reloader-ubi", GOFIPS140: "v1.0.0-c2097c7c"}
	err := lockedFIPS(&opts, &release.Lock{}, []release.Artifact{img("fips-reloader", VariantFIPS, "linux/amd64")}, nil)
	if err == nil || !strings.Contains(err.Error(), `fips image fips-reloader is not named "reloader-fips"`) {
		t.Errorf("a -fips image under another name: %v, want a refusal naming it", err)
	}
	for v, ok := range map[string]bool{"v1.0.0-c2097c7c": true, "v1.26.0": true, "certified": false, "latest": false, "": false,
		"v1.0.0-c2097c7c GOFLAGS=-toolexec=x": false, "v1.0.0-C2097C7C": false} {
		if fipsVersionRE.MatchString(v) != ok {
			t.Errorf("GOFIPS140 %q from a provenance accepted: %v, want %v", v, !ok, ok)
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/local"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/publish/releasetest"

	"github.com/reloader-dev/reloader/test/tools"
)

// values works on what the real pipeline publishes: the repository's own
// charts (reloader, reloader-ubi and the library chart reloader-lib), every
// image variant. Each variant gets its own chart, pinned by digest (a -fips
// one the chart of the variant it is built from), and --check-chart reads
// each at the target. The copied -fips images' controller, run with the
// image's own environment, is in FIPS 140-only mode (--version says
// "(fips140=only)"), the others' is not: the image config's
// GODEBUG=fips140=only reached the target, and the binary links Go's FIPS
// module (a binary without it would refuse to start with that setting).
func TestValuesOnARealLocalRelease(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the release pipeline")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	src := startRegistry(t)
	created := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ubiBase, err := local.PushStandInBase(ctx, src.Host+"/stand-in/ubi-minimal", created)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	license := filepath.Join(dir, "LICENSE")
	if err := os.WriteFile(license, []byte("Apache License, Version 2.0 (test copy)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logb bytes.Buffer
	// The real controller, one platform to keep the build quick; the charts
	// are the repository's.
	amd64, err := pipeline.ParsePlatforms([]string{"linux/amd64"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := local.Run(ctx, local.Options{
		ModuleDir: "../..", MainPackage: "./cmd/reloader", OutDir: filepath.Join(dir, "out"), NoScan: true, Platforms: amd64,
		Registry: src.Host, UBIBase: ubiBase, Version: "v1.2.3", Commit: strings.Repeat("ab", 20), Created: created,
		SupportFile: releasetest.SupportTableFile(t, "v1.2.3"),
		ChartDirs:   []string{"../../charts/reloader", "../../charts/reloader-ubi", "../../charts/reloader-lib"},
		LicenseFile: license, Log: &logb,
	})
	if err != nil {
		t.Fatalf("local release: %v\n%s", err, logb.String())
	}
	dst := startRegistry(t)
	target := dst.Host + "/platform/reloader"
	trust := []string{"--lock", res.LockPath, "--lock-bundle", res.BundlePath, "--key", res.PublicKey, "--allow-unscanned", "--target", target}
	if code, _, errs := runCLI(t, append([]string{"copy"}, trust...)...); code != cli.ExitOK {
		t.Fatalf("copy: exit %d: %s", code, errs)
	}
	code, out, errs := runCLI(t, append([]string{"values", "--check-chart", "-o", "json"}, trust...)...)
	if code != cli.ExitOK {
		t.Fatalf("values on a real release: exit %d: %s", code, errs)
	}
	var v struct {
		Images []struct{ Variant, Chart, Repository, Digest string }
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("values json: %v: %s", err, out)
	}
	want := map[string]string{"standard": "oci://" + target + "/charts/reloader@sha256:", "ubi": "oci://" + target + "/charts/reloader-ubi@sha256:",
		"fips": "oci://" + target + "/charts/reloader@sha256:", "ubi-fips": "oci://" + target + "/charts/reloader-ubi@sha256:"}
	if len(v.Images) != len(want) {
		t.Fatalf("values for %d variants, want %d: %s", len(v.Images), len(want), out)
	}
	for _, iv := range v.Images {
		if !strings.HasPrefix(iv.Chart, want[iv.Variant]) {
			t.Errorf("%s variant installs with %s, want %s…", iv.Variant, iv.Chart, want[iv.Variant])
		}
	}

	for _, iv := range v.Images {
		t.Run("the copied "+iv.Variant+" image's controller runs with the image's environment", func(t *testing.T) {
			fips := strings.HasSuffix(iv.Variant, "fips")
			if got := runImageController(t, iv.Repository+"@"+iv.Digest, "--version"); strings.Contains(got, "(fips140=only)") != fips {
				t.Errorf("%s --version: %q, want (fips140=only) only in a -fips image", iv.Variant, got)
			}
		})
	}
	if code, out, errs := runCLI(t, append([]string{"values", "--variant", "fips"}, trust...)...); code != cli.ExitOK ||
		!strings.Contains(out, "repository: "+target+"/reloader-fips\n") || !strings.Contains(out, target+"/charts/reloader@sha256:") {
		t.Errorf("values --variant fips: exit %d, want the reloader-fips image with the reloader chart:\n%s%s", code, out, errs)
	}

	// The SBOMs of the real controller, every variant, carry every CISA
	// 2025 element and every BSI TR-03183-2 v2.1.0 element (on CycloneDX);
	// v1.1 names what the SPDX 2.3 documents lack.
	review := []string{"review", "--lock", res.LockPath, "--lock-bundle", res.BundlePath, "--key", res.PublicKey, "--allow-unscanned", "--fail-on", "minimum-elements", "-o", "json"}
	code, out, errs = runCLI(t, append(review, "--out", filepath.Join(dir, "review-cisa"), "--profile", "cisa-2025")...)
	if code != cli.ExitOK {
		t.Errorf("review --fail-on minimum-elements --profile cisa-2025 on the real controller: exit %d: %s", code, errs)
	}
	var rv struct {
		Review struct {
			Profile    string
			Components []struct{ Name string }
		}
	}
	if err := json.Unmarshal([]byte(out), &rv); err != nil || rv.Review.Profile != "cisa-2025" {
		t.Errorf("review json: profile %q, %v", rv.Review.Profile, err)
	}
	if code, _, errs := runCLI(t, append(review, "--out", filepath.Join(dir, "review-bsi"), "--profile", "bsi-tr-03183-2")...); code != cli.ExitOK {
		t.Errorf("review --profile bsi-tr-03183-2 on the real controller: exit %d: %s", code, errs)
	}
	code, _, errs = runCLI(t, append(review, "--out", filepath.Join(dir, "review-bsi-1.1"), "--profile", "bsi-tr-03183-2@v1.1")...)
	if code != cli.ExitRefused || !strings.Contains(errs, "Component creator") {
		t.Errorf("review --profile bsi-tr-03183-2@v1.1: exit %d, want 3 naming the component creator: %s", code, errs)
	}
	t.Logf("%d components pass cisa-2025; bsi-tr-03183-2: %s", len(rv.Review.Components), errs)
}

// runImageController runs the controller binary of the linux/amd64 image of
// the index at ref with args and only the environment the image's config
// gives a container, and returns its output.
func runImageController(t *testing.T, ref string, args ...string) string {
	t.Helper()
	img, err := releasetest.PlatformImage(t.Context(), ref, v1.Platform{OS: "linux", Architecture: "amd64"})
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	data, err := releasetest.ImageFile(img, cf.Config.Entrypoint[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "reloader")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = cf.Config.Env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v with %v: %v\n%s", ref, args, cf.Config.Env, err, out)
	}
	return string(out)
}

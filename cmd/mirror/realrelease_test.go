package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/internal/cli"
	"github.com/reloader-dev/reloader/release/local"
	"github.com/reloader-dev/reloader/release/pipeline"

	"github.com/reloader-dev/reloader/test/tools"
)

// values works on what the real pipeline publishes: the repository's own
// charts (reloader, reloader-ubi and the library chart reloader-lib), both
// image variants. Each variant gets its own chart, pinned by digest, and
// --check-chart reads each at the target.
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
		Images []struct{ Variant, Chart string }
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("values json: %v: %s", err, out)
	}
	want := map[string]string{"standard": "oci://" + target + "/charts/reloader@sha256:", "ubi": "oci://" + target + "/charts/reloader-ubi@sha256:"}
	if len(v.Images) != len(want) {
		t.Fatalf("values for %d variants, want %d: %s", len(v.Images), len(want), out)
	}
	for _, iv := range v.Images {
		if !strings.HasPrefix(iv.Chart, want[iv.Variant]) {
			t.Errorf("%s variant installs with %s, want %s…", iv.Variant, iv.Chart, want[iv.Variant])
		}
	}

	// The SBOMs of the real controller, both variants, carry every CISA
	// 2025 element; BSI TR-03183-2 names what they lack.
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
	code, _, errs = runCLI(t, append(review, "--out", filepath.Join(dir, "review-bsi"), "--profile", "bsi-tr-03183-2")...)
	if code != cli.ExitRefused || !strings.Contains(errs, "Component creator") {
		t.Errorf("review --profile bsi-tr-03183-2: exit %d, want 3 naming the component creator: %s", code, errs)
	}
	t.Logf("%d components pass cisa-2025; bsi-tr-03183-2: %s", len(rv.Review.Components), errs)
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/internal/cli"
	"github.com/reloader-dev/reloader/release/local"
	"github.com/reloader-dev/reloader/release/releasetest"
)

// values works on what the real pipeline publishes: the repository's own
// charts (reloader, reloader-ubi and the library chart reloader-lib), both
// image variants. Each variant gets its own chart, pinned by digest, and
// --check-chart reads each at the target.
func TestValuesOnARealLocalRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the release pipeline")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
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
	// A stand-in main package keeps the five cross builds quick; the
	// charts are the repository's.
	res, err := local.Run(ctx, local.Options{
		ModuleDir: "../..", MainPackage: releasetest.SmallApp, OutDir: filepath.Join(dir, "out"),
		Registry: src.Host, UBIBase: ubiBase, Version: "v1.2.3", Commit: strings.Repeat("ab", 20), Created: created,
		ChartDirs:   []string{"../../charts/reloader", "../../charts/reloader-ubi", "../../charts/reloader-lib"},
		LicenseFile: license, Log: &logb, NoScan: true,
	})
	if err != nil {
		t.Fatalf("local release: %v\n%s", err, logb.String())
	}
	dst := startRegistry(t)
	target := dst.Host + "/platform/reloader"
	trust := []string{"--allow-unscanned", "--lock", res.LockPath, "--lock-bundle", res.BundlePath, "--key", res.PublicKey, "--target", target}
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
}

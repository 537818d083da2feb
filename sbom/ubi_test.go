package sbom_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/publish/local"
	"github.com/reloader-dev/reloader/review"
	"github.com/reloader-dev/reloader/sbom"
)

// The UBI variant's base is catalogued from its RPM database: the stand-in
// base carries a real one, so this path runs without Red Hat's image.
func TestRPMPackagesOfTheUBIBaseAreCataloguedWithTheirLicences(t *testing.T) {
	if testing.Short() {
		t.Skip("runs syft")
	}
	ctx := context.Background()
	idx, err := local.StandInBase(ctx, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range im.Manifests {
		if m.Platform == nil || m.Platform.Architecture != "amd64" {
			continue
		}
		base, err := idx.Image(m.Digest)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := sbom.Generate(ctx, base, sbom.Options{Name: "ubi-stand-in", Version: "v1.2.3", Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
			Namespace: "https://example.com/sbom", WorkDir: t.TempDir(), Producer: "Reloader project",
			ProducerURL: "https://example.com/security", Repository: "registry.example/reloader-ubi"})
		if err != nil {
			t.Fatal(err)
		}
		var spdx struct {
			Packages []struct {
				Name            string `json:"name"`
				VersionInfo     string `json:"versionInfo"`
				LicenseDeclared string `json:"licenseDeclared"`
				Checksums       []struct {
					Algorithm string `json:"algorithm"`
					Value     string `json:"checksumValue"`
				} `json:"checksums"`
				ExternalRefs []struct {
					Locator string `json:"referenceLocator"`
				} `json:"externalRefs"`
			} `json:"packages"`
		}
		if err := json.Unmarshal(docs[0].Data, &spdx); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		purls := map[string]string{}
		for _, p := range spdx.Packages {
			got[p.Name] = p.VersionInfo + " " + p.LicenseDeclared
			// Each RPM carries the package digest its database entry
			// records (SIGMD5).
			if p.Name != "ubi-stand-in" && (len(p.Checksums) != 1 || p.Checksums[0].Algorithm != "MD5" || len(p.Checksums[0].Value) != 32) {
				t.Errorf("%s: checksums %+v, want the RPM database's MD5", p.Name, p.Checksums)
			}
			for _, r := range p.ExternalRefs {
				if strings.HasPrefix(r.Locator, "pkg:") {
					purls[p.Name] = r.Locator
				}
			}
		}
		for name, want := range map[string]string{
			"bash":   "5.1.8-9.el9 GPL-3.0-or-later",
			"glibc":  "2.34-125.el9_5.1 (LGPL-2.1-or-later AND GPL-2.0-or-later)",
			"tzdata": "2025a-1.el9 LicenseRef-Fedora-Public-Domain",
		} {
			if got[name] != want {
				t.Errorf("%s: %q, want %q (packages %v)", name, got[name], want, got)
			}
		}
		if !strings.HasPrefix(purls["bash"], "pkg:rpm/") || !strings.Contains(purls["bash"], "arch=x86_64") {
			t.Errorf("bash PURL %q, want an RPM PURL for x86_64", purls["bash"])
		}
		// Every document carries every CISA 2025 element. The CycloneDX
		// one carries every element BSI TR-03183-2 v2.1.0 asks of an RPM:
		// its file is the package, its deployable the layer that delivers
		// it, its creator the distribution's os-release URL. v1.1 wants a
		// SHA-512 of the package file itself, which no RPM database holds.
		for _, d := range docs {
			doc, err := review.ParseSBOM(d.MediaType, d.Data, "UBI stand-in")
			if err != nil {
				t.Fatal(err)
			}
			if missing := doc.Check(review.ProfileCISA2025); len(missing) > 0 {
				t.Errorf("%s lacks CISA 2025 elements: %+v", doc.Format, missing)
			}
			if d.MediaType == sbom.MediaTypeCycloneDX {
				if missing := doc.Check(review.ProfileBSI); len(missing) > 0 {
					t.Errorf("%s lacks BSI TR-03183-2 v2.1.0 elements: %+v", doc.Format, missing)
				}
			}
			bsi := map[string]bool{}
			for _, m := range doc.Check(review.ProfileBSI11) {
				bsi[m.Element] = true
			}
			if !bsi["Hash value of the executable component"] {
				t.Errorf("%s: BSI TR-03183-2 v1.1 does not name the SHA-512 of the RPMs missing: %v", doc.Format, bsi)
			}
		}
		return
	}
	t.Fatal("the stand-in base has no linux/amd64 image")
}

package review

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/support"
)

// craRelease is a release of one image with a CycloneDX SBOM naming the
// producer's contact and security.txt, and what a lock may hold beside.
func craRelease(t *testing.T, withSupport, scanned bool) Input {
	t.Helper()
	lp, err := DefaultLicencePolicy()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(completeBSI), &doc); err != nil {
		t.Fatal(err)
	}
	comp := doc["components"].([]any)[0].(map[string]any)
	comp["externalReferences"] = append(comp["externalReferences"].([]any), map[string]any{"type": "rfc-9116", "url": "https://example.com/security.txt"})
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	img, sb := "sha256:"+strings.Repeat("1", 64), "sha256:"+strings.Repeat("2", 64)
	sbom := release.Artifact{Kind: release.KindSBOM, Name: "app", Platform: "linux/amd64", Subject: img, ArtifactType: MediaTypeCycloneDX, Repository: "registry.example/app", Digest: sb}
	lock := &release.Lock{Version: "v1.0.1", Commit: strings.Repeat("a", 40), Source: "https://example.com/app", Artifacts: []release.Artifact{
		{Kind: release.KindImageIndex, Name: "app", Repository: "registry.example/app", Digest: "sha256:" + strings.Repeat("3", 64)},
		{Kind: release.KindImage, Name: "app", Platform: "linux/amd64", Repository: "registry.example/app", Digest: img}, sbom}}
	if withSupport {
		if lock.Support, err = support.ParseTable([]byte("apiVersion: reloader.dev/support/v1\nseries:\n  - {series: v1.0, released: \"2026-11-01\", endOfSupport: \"2027-11-01\"}\n")); err != nil {
			t.Fatal(err)
		}
		as, err := support.ReadAdvisories(filepath.Join("..", "release", "support", "testdata", "advisories"))
		if err != nil || len(as) == 0 {
			t.Fatalf("the example advisories: %d, %v", len(as), err)
		}
		lock.Advisories = []json.RawMessage{json.RawMessage(as[0].Raw)}
	}
	if scanned {
		lock.Scan = &release.Scan{Scanner: "trivy", ScannerVersion: "0.74.0", DBDigest: "sha256:" + strings.Repeat("7", 64)}
	}
	return Input{Lock: lock, SBOMs: []SBOM{{Artifact: sbom, Data: data}}, Licences: lp, Profile: ProfileBSI}
}

// The CRA map lists the items of Annex I Part II this release carries
// evidence for, each with evidence of the release itself, never a test
// alone, and says it is supporting material.
func TestTheCRAMapListsOnlyItemsThisReleaseCarriesEvidenceFor(t *testing.T) {
	ids := func(m CRAMap) []string {
		var out []string
		for _, it := range m.Items {
			out = append(out, it.ID)
			real := false
			for _, e := range it.Evidence {
				real = real || e.Kind != EvidenceTest
			}
			if !real {
				t.Errorf("%s cites only tests: %+v", it.ID, it.Evidence)
			}
		}
		return out
	}
	bare, err := Build(craRelease(t, false, false))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(bare.CRA), []string{"(1)", "(5)", "(6)", "(7)"}; !slices.Equal(got, want) {
		t.Errorf("an unscanned release without support table or advisories maps %q, want %q", got, want)
	}
	if !strings.Contains(bare.CRA.Notice, "Supporting material") || !strings.Contains(bare.CRA.Framework, "Annex I Part II") {
		t.Errorf("notice %q, framework %q", bare.CRA.Notice, bare.CRA.Framework)
	}
	if bare.SecurityContact != "https://example.com/security" || bare.SecurityTxt != "https://example.com/security.txt" {
		t.Errorf("contact %q, security.txt %q, want those the SBOM names", bare.SecurityContact, bare.SecurityTxt)
	}
	full, err := Build(craRelease(t, true, true))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(full.CRA), []string{"(1)", "(2)", "(3)", "(4)", "(5)", "(6)", "(7)", "(8)"}; !slices.Equal(got, want) {
		t.Errorf("a scanned release with support table and advisories maps %q, want %q", got, want)
	}
	js, _ := json.Marshal(full.CRA)
	for _, want := range []string{"series v1.0 receives security updates until 2027-11-01", "passes", full.MinimumElements[0].Digest, "https://example.com/security.txt"} {
		if !strings.Contains(string(js), want) {
			t.Errorf("the map does not cite %q:\n%s", want, js)
		}
	}
	html, err := full.HTML(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `<table id="cra-map">`) || strings.Count(string(html), `<tr data-item="`) != 8 {
		t.Error("the page does not show the CRA map's eight items")
	}
}

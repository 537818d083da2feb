package csaf_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gocsaf "github.com/gocsaf/csaf/v3/csaf"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/csaf"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/release/support"
	"github.com/reloader-dev/reloader/review"
)

var publisher = csaf.Publisher{Name: "Reloader project", Namespace: "https://github.com/reloader-dev/reloader",
	Contact: "https://github.com/reloader-dev/reloader/security/policy"}

// exampleAdvisory is the repository's checked OSV example advisory.
func exampleAdvisory(t testing.TB) *support.Advisory {
	t.Helper()
	as, err := support.ReadAdvisories(filepath.Join("..", "support", "testdata", "advisories"))
	if err != nil || len(as) == 0 {
		t.Fatalf("the example advisories: %d, %v", len(as), err)
	}
	return as[0]
}

// An OSV advisory is published as a CSAF 2.0 security advisory that the
// CSAF 2.0 schema and gocsaf's model accept and that passes the mandatory
// tests that run offline, and reading it back marks the same versions
// affected as the OSV document does.
func TestOSVAdvisoryIsACSAFSecurityAdvisorySayingTheSame(t *testing.T) {
	osv := exampleAdvisory(t)
	doc, err := csaf.FromOSV(osv, publisher)
	if err != nil {
		t.Fatal(err)
	}
	adv := checkCSAF(t, doc, csaf.CategoryAdvisory)
	if got := string(*adv.Document.Tracking.ID); got != osv.ID || csaf.FileName(got) != "reloader-2026-0001.json" {
		t.Errorf("tracking id %q (file %s), want %s", got, csaf.FileName(got), osv.ID)
	}
	if v := adv.Vulnerabilities[0]; v.Remediations[0].Details == nil || !strings.Contains(*v.Remediations[0].Details, "v1.0.2") {
		t.Errorf("the vendor fix does not name the fixing release: %+v", v.Remediations[0])
	}
	back, err := csaf.ParseAdvisory(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"v0.9.0", "v1.0.0", "v1.0.1", "v1.0.2", "v1.1.0", "v2.0.0"} {
		if back.Affects(v) != osv.Affects(v) {
			t.Errorf("%s: the CSAF advisory says affected=%v, the OSV one %v", v, back.Affects(v), osv.Affects(v))
		}
	}
	if back.ID != osv.ID || back.Summary == "" || !back.Modified.Equal(osv.Modified) {
		t.Errorf("read back as %s %q modified %s", back.ID, back.Summary, back.Modified)
	}
}

// The release's OpenVEX statements are published as a CSAF VEX document:
// products by image digest and component PURL, not_affected with its
// justification and impact, an accepted risk affected with its action.
func TestOpenVEXIsACSAFVEXDocumentSayingTheSame(t *testing.T) {
	l := &release.Lock{Version: "v1.2.3", Source: "https://github.com/reloader-dev/reloader", Created: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		Artifacts: []release.Artifact{
			{Kind: release.KindImageIndex, Name: "reloader", Repository: "ghcr.io/reloader-dev/reloader", Digest: "sha256:" + strings.Repeat("a", 64)},
			{Kind: release.KindImage, Name: "reloader", Platform: "linux/amd64", Repository: "ghcr.io/reloader-dev/reloader", Digest: "sha256:" + strings.Repeat("b", 64)},
		}}
	r := &review.Review{Components: []review.Component{{Name: "golang.org/x/net", Version: "v0.1.0", PURL: "pkg:golang/golang.org/x/net@v0.1.0"}}}
	r.Vulnerabilities.Exceptions = []review.Exception{
		{ID: "CVE-2026-1111", Package: "golang.org/x/net", Kind: gate.KindNotAffected, VEXJustification: "vulnerable_code_not_in_execute_path",
			Justification: "the HTTP/2 server is never started", Expires: "2027-01-01"},
		{ID: "GHSA-aaaa-bbbb-cccc", Package: "golang.org/x/net", Kind: gate.KindAcceptedRisk, Justification: "no fix released yet", Expires: "2027-01-01"},
	}
	openVEX, err := review.OpenVEX(l, r)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := csaf.FromOpenVEX(openVEX, csaf.VEXOptions{TrackingID: csaf.VEXTrackingID(l.Version), Release: l.Version, Publisher: publisher})
	if err != nil {
		t.Fatal(err)
	}
	adv := checkCSAF(t, doc, csaf.CategoryVEX)
	purls := map[string]bool{}
	for _, p := range *adv.ProductTree.FullProductNames {
		purls[string(*p.ProductIdentificationHelper.PURL)] = true
	}
	for _, want := range []string{"pkg:oci/reloader@sha256%3A" + strings.Repeat("b", 64), "pkg:golang/golang.org/x/net@v0.1.0"} {
		if !purls[want] {
			t.Errorf("the product tree lacks %s: %v", want, purls)
		}
	}
	byID := map[string]*gocsaf.Vulnerability{}
	for _, v := range adv.Vulnerabilities {
		switch {
		case v.CVE != nil:
			byID[string(*v.CVE)] = v
		case len(v.IDs) > 0:
			byID[*v.IDs[0].Text] = v
		}
	}
	na := byID["CVE-2026-1111"]
	if na == nil || na.ProductStatus.KnownNotAffected == nil || len(*na.ProductStatus.KnownNotAffected) != 2 ||
		string(*na.Flags[0].Label) != "vulnerable_code_not_in_execute_path" || !strings.Contains(*na.Threats[0].Details, "never started") {
		t.Errorf("the not_affected statement: %+v", na)
	}
	ar := byID["GHSA-aaaa-bbbb-cccc"]
	if ar == nil || ar.ProductStatus.KnownAffected == nil || !strings.Contains(*ar.Remediations[0].Details, "2027-01-01") {
		t.Errorf("the accepted risk: %+v", ar)
	}
	if _, err := csaf.ParseAdvisory(doc); err == nil {
		t.Error("a VEX document was read as an advisory that marks releases affected")
	}
}

// The advisory reader is strict: an unknown field, a document that is not
// CSAF 2.0, or an advisory without an affected version is refused.
func TestParseAdvisoryRefusesWhatItCannotJudgeBy(t *testing.T) {
	doc, err := csaf.FromOSV(exampleAdvisory(t), publisher)
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(map[string]any){
		"unknown field": func(m map[string]any) { m["extra"] = true },
		"CSAF 1.2":      func(m map[string]any) { m["document"].(map[string]any)["csaf_version"] = "1.2" },
		"no affected version": func(m map[string]any) {
			m["vulnerabilities"].([]any)[0].(map[string]any)["product_status"] = map[string]any{"fixed": []any{"RELOADER-2026-0001-FIXED-1"}}
		},
	} {
		var m map[string]any
		if err := json.Unmarshal(doc, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, _ := json.Marshal(m)
		if _, err := csaf.ParseAdvisory(b); err == nil {
			t.Errorf("%s: read as an advisory", name)
		}
	}
}

// checkCSAF is what a CSAF consumer checks: strict decoding into gocsaf's
// model and its Validate, the CSAF 2.0 JSON schema gocsaf embeds, and the
// mandatory tests of CSAF 2.0 §6.1 that this document's shape makes
// checkable offline (gocsaf runs the full set only through the external
// csaf-validator-service).
func checkCSAF(t *testing.T, doc []byte, category string) *gocsaf.Advisory {
	t.Helper()
	path := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	adv, err := gocsaf.LoadAdvisory(path)
	if err != nil {
		t.Fatalf("gocsaf.LoadAdvisory: %v", err)
	}
	if err := csaf.Validate(doc); err != nil {
		t.Fatal(err)
	}
	if got := string(*adv.Document.Category); got != category {
		t.Fatalf("category %s, want %s", got, category)
	}
	for _, f := range mandatoryOffline(adv) {
		t.Errorf("mandatory test %s", f)
	}
	return adv
}

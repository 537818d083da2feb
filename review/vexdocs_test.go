package review

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/csaf"
	"github.com/reloader-dev/reloader/release/support"
)

// withVEX is f as a scanned release whose lock records two exceptions, a
// not_affected one holding until 2027-01-31 and an accepted risk that was
// past its date (2026-11-01) when the fixture's review is made, and carries
// the repository's example advisory: what the release's VEX statements and
// CSAF documents are made from.
func withVEX(t *testing.T, f *fixture) *fixture {
	t.Helper()
	lock := *f.lock
	lock.Scan = &release.Scan{Scanner: "trivy", ScannerVersion: "0.74.0", DBDigest: "sha256:" + strings.Repeat("7", 64), Exceptions: []release.ScanException{
		{ID: "CVE-2099-0001", Package: "golang.org/x/sync", Expires: "2027-01-31", Justification: "never reached", Kind: "not_affected", VEXJustification: "vulnerable_code_not_in_execute_path"},
		{ID: "CVE-2099-0002", Package: "golang.org/x/sync", Expires: "2026-11-01", Justification: "no fix released yet", Kind: "accepted_risk"},
	}}
	as, err := support.ReadAdvisories(filepath.Join("..", "release", "support", "testdata", "advisories"))
	if err != nil || len(as) == 0 {
		t.Fatalf("the example advisories: %d, %v", len(as), err)
	}
	lock.Advisories = []json.RawMessage{json.RawMessage(as[0].Raw)}
	return &fixture{lock: &lock, sboms: f.sboms}
}

// The review lists each VEX statement of the release with when it was
// stated and until when it holds, marking one past its date, and the CSAF
// documents the release publishes by tracking id with what each covers;
// the page and the Markdown show both.
func TestTheReviewShowsEachVEXStatementsDatesAndTheCSAFDocuments(t *testing.T) {
	f := withVEX(t, releases(t)[newSync])
	r, err := Build(Input{Lock: f.lock, SBOMs: f.sboms, Licences: repoLicencePolicy(t), Now: fixtureCreated})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range r.VEXStatements {
		got = append(got, s.Vulnerability+" "+s.Status+" "+s.Stated.Format("2006-01-02")+".."+s.Until+map[bool]string{true: " past"}[s.PastItsDate])
	}
	stated := f.lock.Created.UTC().Format("2006-01-02")
	if want := []string{"CVE-2099-0001 not_affected " + stated + "..2027-01-31", "CVE-2099-0002 affected " + stated + "..2026-11-01 past"}; !slices.Equal(got, want) {
		t.Errorf("VEX statements %q, want %q", got, want)
	}
	var ids []string
	for _, d := range r.CSAF {
		ids = append(ids, d.ID+" "+d.Category+" "+d.File)
	}
	adv := r.CSAF[0].ID
	vexID := "RELOADER-VEX-" + f.lock.Version
	if want := []string{adv + " csaf_security_advisory " + csaf.FileName(adv), vexID + " csaf_vex " + csaf.FileName(vexID)}; !slices.Equal(ids, want) {
		t.Errorf("CSAF documents %q, want %q", ids, want)
	}
	if vexDoc := r.CSAF[1]; len(vexDoc.Covers) != 2 || !strings.Contains(vexDoc.Covers[1], "until 2026-11-01") {
		t.Errorf("the CSAF VEX document covers %q, want each statement with its dates", vexDoc.Covers)
	}
	html, err := r.HTML(nil)
	if err != nil {
		t.Fatal(err)
	}
	md, err := r.Markdown(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<table id="vex-statements">`, "2026-11-01 (past its date: no longer holds)", `<table id="csaf">`, `href="../csaf/` + r.CSAF[1].File + `"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	for _, want := range []string{"CVE-2099-0002 in golang.org/x/sync: affected, stated " + stated + ", until 2026-11-01 (PAST ITS DATE", "- RELOADER-VEX-" + f.lock.Version + " (csaf_vex"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the Markdown does not show %q:\n%s", want, md)
		}
	}
}

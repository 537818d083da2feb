package csaf_test

import (
	"strings"
	"testing"
	"time"

	"github.com/openvex/go-vex/pkg/vex"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/csaf"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/review"
)

// A statement resting on a dated exception carries, in both documents, when
// it was stated and until when it holds, where a machine reads them back:
// OpenVEX's timestamp and status_notes, CSAF's dated flag, threat and
// mitigation and a dated "Stated until" impact threat. The CSAF document
// still passes the schema and the mandatory tests.
func TestEveryVEXStatementCarriesWhenItWasStatedAndUntilWhen(t *testing.T) {
	cut := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	l := &release.Lock{Version: "v1.2.3", Source: "https://github.com/reloader-dev/reloader", Created: cut,
		Artifacts: []release.Artifact{{Kind: release.KindImageIndex, Name: "reloader", Repository: "ghcr.io/reloader-dev/reloader", Digest: "sha256:" + strings.Repeat("a", 64)}}}
	r := &review.Review{Components: []review.Component{{Name: "golang.org/x/net", Version: "v0.1.0", PURL: "pkg:golang/golang.org/x/net@v0.1.0"}}}
	r.Vulnerabilities.Exceptions = []review.Exception{
		{ID: "CVE-2026-1111", Package: "golang.org/x/net", Kind: gate.KindNotAffected, VEXJustification: "vulnerable_code_not_in_execute_path",
			Justification: "the HTTP/2 server is never started", Expires: "2027-01-01"},
		{ID: "CVE-2026-2222", Package: "golang.org/x/net", Kind: gate.KindAcceptedRisk, Justification: "no fix released yet", Expires: "2027-02-01"},
	}
	openVEX, err := review.OpenVEX(l, r)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := vex.Parse(openVEX)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Time{"CVE-2026-1111": time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), "CVE-2026-2222": time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC)}
	for _, st := range doc.Statements {
		until, ok, err := csaf.StatementUntil(st)
		name := string(st.Vulnerability.Name)
		if err != nil || !ok || !until.Equal(want[name]) || st.Timestamp == nil || !st.Timestamp.Equal(cut) {
			t.Errorf("OpenVEX %s: stated %v, until %v %v %v; want %v until %v", name, st.Timestamp, until, ok, err, cut, want[name])
		}
	}
	data, err := csaf.FromOpenVEX(openVEX, csaf.VEXOptions{TrackingID: csaf.VEXTrackingID(l.Version), Release: l.Version, Publisher: publisher})
	if err != nil {
		t.Fatal(err)
	}
	adv := checkCSAF(t, data, csaf.CategoryVEX)
	for _, v := range adv.Vulnerabilities {
		name := string(*v.CVE)
		until, ok, err := csaf.VulnerabilityUntil(v)
		if err != nil || !ok || !until.Equal(want[name]) {
			t.Errorf("CSAF %s: until %v %v %v, want %v", name, until, ok, err, want[name])
		}
		stated := ""
		switch {
		case len(v.Flags) > 0:
			stated = *v.Flags[0].Date
		case len(v.Remediations) > 0:
			stated = *v.Remediations[0].Date
		}
		if stated != cut.Format(time.RFC3339) {
			t.Errorf("CSAF %s: stated %q, want %s", name, stated, cut.Format(time.RFC3339))
		}
	}
	if st, _, err := csaf.StatementUntil(vex.Statement{StatusNotes: "Stated until 2027-13-01: no"}); err == nil {
		t.Errorf("an unreadable end was read as %v", st)
	}
}

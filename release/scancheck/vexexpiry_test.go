package scancheck_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/scancheck"
)

// The VEX statements a release attests are made from the exceptions its
// lock records, so the rule that judges the exceptions judges the
// statements: one past its date is reported by vulnerability, image and
// date, in the result a command prints with -o json, and refuses the
// release; the day before, it holds and nothing is reported.
func TestAVEXStatementPastItsDateIsReportedByVulnerabilityImageAndDate(t *testing.T) {
	l := lockScannedAt()
	idx := "sha256:" + strings.Repeat("a", 64)
	l.Artifacts = []release.Artifact{
		{Kind: release.KindImageIndex, Name: "reloader", Repository: "ghcr.io/reloader-dev/reloader", Digest: idx},
		{Kind: release.KindImage, Name: "reloader", Platform: "linux/amd64", Repository: "ghcr.io/reloader-dev/reloader", Digest: "sha256:" + strings.Repeat("b", 64)},
	}
	l.Scan.Exceptions[0].Kind = "not_affected"

	res, err := scancheck.Policy{Now: time.Date(2027, 1, 30, 23, 59, 0, 0, time.UTC)}.Check(l)
	if err != nil || len(res.ExpiredStatements) != 0 {
		t.Fatalf("the day before its date: %+v, %v; want the statement to hold", res.ExpiredStatements, err)
	}

	res, err = scancheck.Policy{Now: time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC)}.Check(l)
	if !errors.Is(err, scancheck.ErrRefused) {
		t.Fatalf("on its date: %v; want a refusal", err)
	}
	want := scancheck.ExpiredStatement{Vulnerability: "CVE-2099-0002", Package: "golang.org/x/time", Kind: "not_affected", Expires: "2027-01-31",
		Images: []string{"reloader@" + idx}}
	if len(res.ExpiredStatements) != 1 || !equalStatement(res.ExpiredStatements[0], want) {
		t.Fatalf("expired statements %+v, want %+v", res.ExpiredStatements, want)
	}
	for _, s := range []string{"CVE-2099-0002", "reloader@" + idx, "2027-01-31", "VEX statement"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("the refusal does not name %q: %v", s, err)
		}
	}
	js, err := json.Marshal(res)
	if err != nil || !strings.Contains(string(js), `"expiredStatements":[{"vulnerability":"CVE-2099-0002"`) {
		t.Errorf("-o json: %s %v", js, err)
	}
}

func equalStatement(a, b scancheck.ExpiredStatement) bool {
	return a.Vulnerability == b.Vulnerability && a.Package == b.Package && a.Kind == b.Kind && a.Expires == b.Expires && slices.Equal(a.Images, b.Images)
}

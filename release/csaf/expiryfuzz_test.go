package csaf_test

import (
	"testing"
	"time"

	gocsaf "github.com/gocsaf/csaf/v3/csaf"
	"github.com/openvex/go-vex/pkg/vex"

	"github.com/reloader-dev/reloader/release/csaf"
)

// A statement's end is read from documents that come from outside (an
// attestation, a CSAF file): no status_notes or threat date may panic the
// readers, and an end they accept is a time that, written again, reads back
// the same.
func FuzzStatementUntil(f *testing.F) {
	f.Add(csaf.StatedUntilNote(time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC), "why"), "2027-01-31T00:00:00Z")
	f.Add("Stated until 2027-13-01: no", "2027-01-31")
	f.Add("Stated until ", "")
	f.Add("the release policy states this until 2027-01-31 (00:00 UTC)", "2027-01-31T00:00:00+02:00")
	f.Fuzz(func(t *testing.T, notes, date string) {
		until, ok, err := csaf.StatementUntil(vex.Statement{StatusNotes: notes})
		if err == nil && ok {
			back, ok2, err2 := csaf.StatementUntil(vex.Statement{StatusNotes: csaf.StatedUntilNote(until, "again")})
			if err2 != nil || !ok2 || !back.Equal(until) {
				t.Fatalf("%q read as %v, written and read again as %v %v %v", notes, until, back, ok2, err2)
			}
		}
		details := notes
		v := &gocsaf.Vulnerability{Threats: gocsaf.Threats{nil, {Details: &details, Date: &date}, {Details: &details}}}
		if u, ok, err := csaf.VulnerabilityUntil(v); err == nil && ok && u.Location() != time.UTC {
			t.Fatalf("threat date %q read as %v, not in UTC", date, u)
		}
	})
}

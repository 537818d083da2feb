package csaf

import (
	"fmt"
	"strings"
	"time"

	gocsaf "github.com/gocsaf/csaf/v3/csaf"
	"github.com/openvex/go-vex/pkg/vex"
)

// Neither OpenVEX 0.2.0 nor CSAF 2.0 has a field for the end of a
// statement's validity, and OpenVEX's schema allows no property of its own
// in a statement (additionalProperties: false). A statement resting on a
// dated exception therefore carries its end where each format keeps dated,
// typed values, in one form a machine reads back:
//
//   - OpenVEX: the statement's timestamp is when it was made (the release
//     cut), and status_notes opens with "Stated until <RFC 3339>". A second,
//     later-dated "affected" statement would say the same in OpenVEX's own
//     sequence-of-statements model, but go-vex and Trivy pick the latest
//     statement whatever the clock says, so it would stop the suppression
//     the day the release is cut.
//   - CSAF: the flag, the impact threat and the mitigation carry the date
//     the assessment was made (their defined meaning), and an impact threat
//     whose date (date-time) is the end and whose details open with "Stated
//     until" says from when it no longer holds.
//
// The signed lock's exception record holds the same date; it is what
// reloader-mirror judges (release/scancheck).
const statedUntil = "Stated until "

// StatedUntilNote is the status_notes of an OpenVEX statement that holds
// until: its machine-readable end first, then why.
func StatedUntilNote(until time.Time, why string) string {
	return statedUntil + until.UTC().Format(time.RFC3339) + ": " + why
}

// StatementUntil reads the end of an OpenVEX statement's validity from its
// status_notes; false when it states none (it holds until replaced).
func StatementUntil(st vex.Statement) (time.Time, bool, error) {
	rest, ok := strings.CutPrefix(st.StatusNotes, statedUntil)
	if !ok {
		return time.Time{}, false, nil
	}
	stamp, _, _ := strings.Cut(rest, ": ")
	t, err := time.Parse(time.RFC3339, stamp)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("the statement on %s: status_notes %q: its end is not an RFC 3339 time", st.Vulnerability.Name, st.StatusNotes)
	}
	return t.UTC(), true, nil
}

// untilThreat is the impact threat saying when a statement stops holding.
func untilThreat(until time.Time, ids *gocsaf.Products) *gocsaf.Threat {
	return &gocsaf.Threat{Category: ptr(gocsaf.CSAFThreatCategoryImpact), Date: ptr(until.UTC().Format(time.RFC3339)), ProductIds: ids,
		Details: ptr(statedUntil + until.UTC().Format(time.RFC3339) + ": from then on the release policy no longer states this, " +
			"and the finding must not be suppressed by this document.")}
}

// VulnerabilityUntil reads the end of a CSAF VEX vulnerability's statement:
// the date of its "Stated until" impact threat; false when it has none.
func VulnerabilityUntil(v *gocsaf.Vulnerability) (time.Time, bool, error) {
	for _, th := range v.Threats {
		if th == nil || th.Details == nil || !strings.HasPrefix(*th.Details, statedUntil) {
			continue
		}
		if th.Date == nil {
			return time.Time{}, false, fmt.Errorf("the %q threat has no date", *th.Details)
		}
		t, err := time.Parse(time.RFC3339, *th.Date)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("the %q threat's date %q is not a date-time", *th.Details, *th.Date)
		}
		return t.UTC(), true, nil
	}
	return time.Time{}, false, nil
}

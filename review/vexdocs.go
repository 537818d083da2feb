package review

import (
	"fmt"
	"strings"
	"time"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/csaf"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/release/support"
)

// VEXStatement is one statement of the VEX documents the release attests
// (OpenVEX) and publishes (CSAF VEX): an exception its gate applied, stated
// when the release was made and holding until the exception's expiry.
type VEXStatement struct {
	Vulnerability string `json:"vulnerability"`
	Package       string `json:"package"`
	// Status is the OpenVEX status: not_affected, or affected for an
	// accepted risk.
	Status string `json:"status"`
	// Stated is when the statement was made (the release's creation),
	// Until the date (00:00 UTC) from which it no longer holds.
	Stated time.Time `json:"stated"`
	Until  string    `json:"until"`
	// PastItsDate: at the review's date the statement no longer holds,
	// though the attestation still carries it; reloader-mirror refuses the
	// release for it.
	PastItsDate bool `json:"pastItsDate"`
}

// CSAFDocument is one CSAF 2.0 document the release publishes beside its
// versions page (csaf/), signed with the release's signer.
type CSAFDocument struct {
	// ID is the document's tracking id, File its file name in csaf/.
	ID       string `json:"id"`
	File     string `json:"file"`
	Category string `json:"category"`
	// Covers says what it is about: the vulnerabilities and, for an
	// advisory, the affected versions.
	Covers []string `json:"covers"`
}

// vexStatements are the statements of the release's VEX documents, made
// from the exceptions the signed lock records, as review.OpenVEX and the
// pipeline make them.
func vexStatements(l *release.Lock, v Vulnerabilities) []VEXStatement {
	out := []VEXStatement{}
	for _, e := range v.Exceptions {
		if e.Source != ExceptionFromLock {
			continue
		}
		status := "affected"
		if e.Kind == gate.KindNotAffected {
			status = "not_affected"
		}
		out = append(out, VEXStatement{Vulnerability: e.ID, Package: e.Package, Status: status, Stated: l.Created.UTC(), Until: e.Expires, PastItsDate: e.Expired})
	}
	return out
}

// csafDocuments are the CSAF documents the release publishes: one security
// advisory per advisory the signed lock carries and, when the release
// states any VEX statement, its VEX document. They are a function of the
// lock, so the signed review lists them as the pipeline writes them.
func csafDocuments(l *release.Lock, statements []VEXStatement) ([]CSAFDocument, error) {
	advisories, err := l.ParsedAdvisories()
	if err != nil {
		return nil, fmt.Errorf("the lock's advisories: %w", err)
	}
	out := []CSAFDocument{}
	for _, a := range advisories {
		covers := []string{strings.Join(append([]string{a.ID}, a.Aliases...), ", ")}
		for _, af := range a.Affected {
			for _, r := range af.Ranges {
				covers = append(covers, af.Package.Name+" "+describeRange(r.Events))
			}
		}
		out = append(out, CSAFDocument{ID: a.ID, File: csaf.FileName(a.ID), Category: csaf.CategoryAdvisory, Covers: covers})
	}
	if len(statements) > 0 {
		id := csaf.VEXTrackingID(l.Version)
		d := CSAFDocument{ID: id, File: csaf.FileName(id), Category: csaf.CategoryVEX}
		for _, s := range statements {
			d.Covers = append(d.Covers, fmt.Sprintf("%s in %s: %s, stated %s, until %s", s.Vulnerability, s.Package, s.Status,
				s.Stated.Format(time.DateOnly), s.Until))
		}
		out = append(out, d)
	}
	return out, nil
}

// describeRange writes an OSV range's events as people read them
// (">= 1.0.0, < 1.1.0").
func describeRange(events []support.Event) string {
	var parts []string
	for _, e := range events {
		switch {
		case e.Introduced != "" && e.Introduced != "0":
			parts = append(parts, ">= "+e.Introduced)
		case e.Fixed != "":
			parts = append(parts, "< "+e.Fixed)
		case e.LastAffected != "":
			parts = append(parts, "<= "+e.LastAffected)
		case e.Limit != "":
			parts = append(parts, "< "+e.Limit+" (limit)")
		}
	}
	if len(parts) == 0 {
		return "all versions"
	}
	return strings.Join(parts, ", ")
}

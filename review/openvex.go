package review

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/openvex/go-vex/pkg/vex"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/csaf"
	"github.com/reloader-dev/reloader/release/gate"
)

// OpenVEX returns the release's unexpired exceptions as an OpenVEX document
// that says what each one is. Only an exception of kind not_affected becomes
// "not_affected", with its OpenVEX justification; an accepted risk is
// "affected", its action_statement naming the expiry, because a scanner fed
// this document (trivy --vex) suppresses not_affected findings, and an
// accepted risk is a vulnerability the release ships knowingly, not one it
// lacks. Expired exceptions are never emitted: they accept nothing, and a
// statement left behind would keep suppressing the finding. Each statement
// carries when it was stated (timestamp, the release's creation) and until
// when (status_notes, csaf.StatedUntilNote), so that one read after the
// exception expired says itself that it no longer holds.
//
// Products are the release's image indexes and platform images by digest
// (pkg:oci/<name>@sha256:...), with no repository qualifier, so the
// statements still match after reloader-mirror moves the images elsewhere.
func OpenVEX(l *release.Lock, r *Review) ([]byte, error) {
	created := l.Created.UTC()
	doc := vex.VEX{Metadata: vex.Metadata{
		Context:   vex.ContextLocator(),
		ID:        strings.TrimSuffix(l.Source, "/") + "/releases/" + l.Version + "/openvex.json",
		Author:    "Reloader release policy (" + l.Source + ")",
		Timestamp: &created,
		Version:   1,
		Tooling:   "reloader-mirror review",
	}, Statements: []vex.Statement{}}
	var products []vex.Product
	for _, a := range l.Artifacts {
		if a.Kind != release.KindImageIndex && a.Kind != release.KindImage {
			continue
		}
		products = append(products, vex.Product{Component: vex.Component{ID: ociPURL(a)}})
	}
	purls := map[string]string{}
	for _, c := range r.Components {
		if c.PURL != "" {
			purls[c.Name] = c.PURL
		}
	}
	for _, e := range r.Vulnerabilities.Exceptions {
		if e.Expired {
			continue
		}
		sub := purls[e.Package]
		if sub == "" {
			sub = e.Package
		}
		ps := make([]vex.Product, len(products))
		for i, p := range products {
			p.Subcomponents = []vex.Subcomponent{{Component: vex.Component{ID: sub}}}
			ps[i] = p
		}
		st := vex.Statement{
			Vulnerability: vex.Vulnerability{Name: vex.VulnerabilityID(e.ID)},
			Timestamp:     &created,
			Products:      ps,
		}
		until, err := time.Parse(time.DateOnly, e.Expires)
		if err != nil {
			return nil, fmt.Errorf("OpenVEX statement for %s in %s: expiry %q is not a date (YYYY-MM-DD)", e.ID, e.Package, e.Expires)
		}
		switch e.Kind {
		case gate.KindNotAffected:
			st.Status, st.Justification, st.ImpactStatement = vex.StatusNotAffected, vex.Justification(e.VEXJustification), e.Justification
			st.StatusNotes = csaf.StatedUntilNote(until, "the release policy states this until its exception expires, and not after")
		default:
			// An exception of no known kind claims no more than an
			// accepted risk.
			st.Status, st.ActionStatementTimestamp = vex.StatusAffected, &created
			st.StatusNotes = csaf.StatedUntilNote(until, "the release policy accepts this risk until its exception expires, and not after")
			st.ActionStatement = fmt.Sprintf("Accepted risk until %s (00:00 UTC): %s. From that date the release policy no longer accepts it; upgrade to a release that fixes it.",
				e.Expires, strings.TrimSuffix(e.Justification, "."))
		}
		if err := st.Validate(); err != nil {
			return nil, fmt.Errorf("OpenVEX statement for %s in %s: %w", e.ID, e.Package, err)
		}
		doc.Statements = append(doc.Statements, st)
	}
	var buf bytes.Buffer
	if err := doc.ToJSON(&buf); err != nil {
		return nil, fmt.Errorf("encoding the OpenVEX document: %w", err)
	}
	return buf.Bytes(), nil
}

// ociPURL is the package URL of an image by digest, as scanners name it,
// without repository_url: the digest identifies the image wherever it is
// copied.
func ociPURL(a release.Artifact) string {
	name := a.Repository
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	return "pkg:oci/" + name + "@" + url.QueryEscape(a.Digest)
}

// lockExceptionKind is the kind a lock's exception records; locks written
// before kinds existed record none, which claims an accepted risk.
func lockExceptionKind(e release.ScanException) gate.ExceptionKind {
	if e.Kind == string(gate.KindNotAffected) {
		return gate.KindNotAffected
	}
	return gate.KindAcceptedRisk
}

// Package csaf writes the release's security advisories (release/advisories,
// OSV) and its VEX statements (the OpenVEX document the pipeline attests) as
// CSAF 2.0 documents, the format CERTs and ENISA's reporting platform read,
// with the model of gocsaf/csaf (the BSI-funded CSAF tooling), and reads a
// CSAF security advisory back for reloader-mirror's advisory judgment.
//
// The release signs each document (a Sigstore bundle beside it) and
// publishes both next to the versions page; a consumer verifies the bundle
// against the same trust policy as the release lock before reading one.
package csaf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	gocsaf "github.com/gocsaf/csaf/v3/csaf"
)

// MediaType is the media type the CSAF 2.0 specification registers for its
// JSON documents (§9.1.1: application/csaf+json).
const MediaType = "application/csaf+json"

// BundleSuffix is appended to a document's file name for its Sigstore
// bundle ("reloader-2026-0001.json.sigstore.json").
const BundleSuffix = ".sigstore.json"

// Publisher is the organisation that issues the documents.
type Publisher struct {
	// Name is the producer ("Reloader project").
	Name string
	// Namespace is its URL (CSAF §3.2.1.8.3: the publisher's trust
	// domain), the project's source URL.
	Namespace string
	// Contact is how to reach its security team (a security.txt or
	// address); empty omits it.
	Contact string
}

// FileName is the file name CSAF §5.1 gives a document of tracking id:
// lower case, every character but [+\-a-z0-9] an underscore, ".json".
func FileName(trackingID string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(trackingID) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '+', r == '-':
			b.WriteRune(r)
		default:
			b.WriteRune('_')
		}
	}
	return b.String() + ".json"
}

// document is the document part every one of ours shares: published by the
// vendor, TLP:WHITE (public), one final revision.
func document(category, title, id string, p Publisher, initial, current time.Time, summary string) *gocsaf.Document {
	cat := gocsaf.DocumentCategory(category)
	ver := gocsaf.CSAFVersion20
	pubCat := gocsaf.CSAFCategoryVendor
	lang := gocsaf.Lang("en")
	tlp := gocsaf.TLPLabel(gocsaf.TLPLabelWhite)
	status := gocsaf.CSAFTrackingStatusFinal
	rev := gocsaf.RevisionNumber("1")
	tid := gocsaf.TrackingID(id)
	cur := current.UTC().Format(time.RFC3339)
	init := initial.UTC().Format(time.RFC3339)
	pub := &gocsaf.DocumentPublisher{Category: &pubCat, Name: ptr(p.Name), Namespace: ptr(p.Namespace)}
	if p.Contact != "" {
		pub.ContactDetails = ptr(p.Contact)
	}
	return &gocsaf.Document{
		Category:     &cat,
		CSAFVersion:  &ver,
		Distribution: &gocsaf.DocumentDistribution{TLP: &gocsaf.TLP{DocumentTLPLabel: &tlp}},
		Lang:         &lang,
		Publisher:    pub,
		Title:        ptr(title),
		Tracking: &gocsaf.Tracking{
			ID:                 &tid,
			InitialReleaseDate: &init,
			CurrentReleaseDate: &cur,
			Status:             &status,
			Version:            &rev,
			RevisionHistory:    gocsaf.Revisions{{Date: &cur, Number: &rev, Summary: ptr(summary)}},
			Generator:          &gocsaf.Generator{Engine: &gocsaf.Engine{Name: ptr("reloader-release")}},
		},
	}
}

// encode validates adv with the library's model checks and the CSAF 2.0
// JSON schema it embeds, and writes it as indented JSON.
func encode(adv *gocsaf.Advisory) ([]byte, error) {
	if err := adv.Validate(); err != nil {
		return nil, fmt.Errorf("CSAF document %s: %w", trackingID(adv), err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(adv); err != nil {
		return nil, fmt.Errorf("encoding CSAF document %s: %w", trackingID(adv), err)
	}
	if err := Validate(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("CSAF document %s: %w", trackingID(adv), err)
	}
	return buf.Bytes(), nil
}

// Validate checks a CSAF document against the CSAF 2.0 JSON schema (with
// the CVSS schemas it refers to) that gocsaf embeds: offline, as a release
// machine and an air-gapped mirror are. The specification's mandatory tests
// (§6.1) beyond the schema run in gocsaf only through an external
// validation service (csaf_validator --validator), which neither has.
func Validate(data []byte) error {
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("reading the CSAF document: %w", err)
	}
	errs, err := gocsaf.ValidateCSAF(doc)
	if err != nil {
		return fmt.Errorf("validating against the CSAF 2.0 schema: %w", err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("not valid against the CSAF 2.0 schema: %s", strings.Join(errs, "; "))
	}
	return nil
}

func trackingID(adv *gocsaf.Advisory) string {
	if adv.Document != nil && adv.Document.Tracking != nil && adv.Document.Tracking.ID != nil {
		return string(*adv.Document.Tracking.ID)
	}
	return "(no tracking id)"
}

func ptr[T any](v T) *T { return &v }

func products(ids ...string) *gocsaf.Products {
	out := make(gocsaf.Products, len(ids))
	for i, id := range ids {
		out[i] = ptr(gocsaf.ProductID(id))
	}
	return &out
}

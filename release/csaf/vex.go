package csaf

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	gocsaf "github.com/gocsaf/csaf/v3/csaf"
	"github.com/openvex/go-vex/pkg/vex"
)

// CategoryVEX is the CSAF profile of a VEX document (§4.5).
const CategoryVEX = "csaf_vex"

// VEXOptions names the VEX document.
type VEXOptions struct {
	// TrackingID is the document's identifier ("RELOADER-VEX-v1.2.3").
	TrackingID string
	// Release is the version the statements are about, for the title.
	Release   string
	Publisher Publisher
}

// FromOpenVEX writes the release's OpenVEX document (review.OpenVEX) as a
// CSAF 2.0 VEX document saying the same: its products are the release's
// images by digest (their pkg:oci PURL) and the components the statements
// name (their PURL), each component in each image a default_component_of
// relationship; not_affected is known_not_affected with the OpenVEX
// justification as the flag and the impact statement as an impact threat;
// affected (an accepted risk) is known_affected with the action statement
// as a mitigation. Each carries the date it was stated (the flag's, the
// threat's, the mitigation's date) and, when the OpenVEX statement states
// an end, a dated impact threat saying from when it no longer holds (see
// expiry.go).
func FromOpenVEX(openVEX []byte, o VEXOptions) ([]byte, error) {
	doc, err := vex.Parse(openVEX)
	if err != nil {
		return nil, fmt.Errorf("CSAF VEX %s: reading the OpenVEX document: %w", o.TrackingID, err)
	}
	when := time.Now().UTC()
	if doc.Timestamp != nil {
		when = doc.Timestamp.UTC()
	}
	d := document(CategoryVEX, "VEX statements of release "+o.Release, o.TrackingID, o.Publisher, when, when,
		"Initial version, from the release's OpenVEX document "+doc.ID+".")
	d.Notes = gocsaf.Notes{{NoteCategory: ptr(gocsaf.CSAFNoteCategorySummary), Title: ptr("What this says"),
		Text: ptr("The vulnerability findings the release policy accepted for release " + o.Release + ", by image digest: not affected (with its justification) or affected and accepted until a date.")}}
	d.References = gocsaf.References{{ReferenceCategory: ptr(string(gocsaf.CSAFReferenceCategoryExternal)),
		Summary: ptr("the OpenVEX document this one says again"), URL: ptr(doc.ID)}}
	t := newVEXTree()
	var vulns gocsaf.Vulnerabilities
	for _, st := range doc.Statements {
		if st.Timestamp == nil {
			// OpenVEX: a statement without its own timestamp has the
			// document's.
			st.Timestamp = &when
		}
		v, err := t.vulnerability(st)
		if err != nil {
			return nil, fmt.Errorf("CSAF VEX %s: %w", o.TrackingID, err)
		}
		vulns = append(vulns, v)
	}
	if len(vulns) == 0 {
		return nil, fmt.Errorf("CSAF VEX %s: the OpenVEX document has no statement", o.TrackingID)
	}
	return encode(&gocsaf.Advisory{Document: d, ProductTree: t.tree(), Vulnerabilities: vulns})
}

// vexTree collects the products the statements name, each once.
type vexTree struct {
	names map[string]*gocsaf.FullProductName
	rels  map[string]*gocsaf.Relationship
}

func newVEXTree() *vexTree {
	return &vexTree{names: map[string]*gocsaf.FullProductName{}, rels: map[string]*gocsaf.Relationship{}}
}

// productID is a short stable id for a PURL: CSAF ids are opaque tokens.
func productID(prefix, purl string) string {
	sum := sha256.Sum256([]byte(purl))
	return prefix + "-" + hex.EncodeToString(sum[:6])
}

// product adds a product named by its PURL and returns its id.
func (t *vexTree) product(prefix, purl string) string {
	id := productID(prefix, purl)
	if t.names[id] == nil {
		name := purl
		if u, err := url.PathUnescape(purl); err == nil {
			name = u
		}
		t.names[id] = &gocsaf.FullProductName{Name: ptr(strings.TrimPrefix(name, "pkg:")), ProductID: ptr(gocsaf.ProductID(id)),
			ProductIdentificationHelper: &gocsaf.ProductIdentificationHelper{PURL: ptr(gocsaf.PURL(purl))}}
	}
	return id
}

// inImage adds the relationship "component in image" and returns its id.
func (t *vexTree) inImage(component, image string) string {
	id := component + ":" + image
	if t.rels[id] == nil {
		t.rels[id] = &gocsaf.Relationship{
			Category:                  ptr(gocsaf.CSAFRelationshipCategoryDefaultComponentOf),
			ProductReference:          ptr(gocsaf.ProductID(component)),
			RelatesToProductReference: ptr(gocsaf.ProductID(image)),
			FullProductName: &gocsaf.FullProductName{ProductID: ptr(gocsaf.ProductID(id)),
				Name: ptr(*t.names[component].Name + " in " + *t.names[image].Name)},
		}
	}
	return id
}

func (t *vexTree) tree() *gocsaf.ProductTree {
	var names gocsaf.FullProductNames
	for _, k := range sortedKeys(t.names) {
		names = append(names, t.names[k])
	}
	var rels gocsaf.Relationships
	for _, k := range sortedKeys(t.rels) {
		rels = append(rels, t.rels[k])
	}
	return &gocsaf.ProductTree{FullProductNames: &names, RelationShips: &rels}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// vulnerability is one OpenVEX statement as a CSAF vulnerability.
func (t *vexTree) vulnerability(st vex.Statement) (*gocsaf.Vulnerability, error) {
	name := string(st.Vulnerability.Name)
	var ids []string
	for _, p := range st.Products {
		img := t.product("IMAGE", p.ID)
		if len(p.Subcomponents) == 0 {
			ids = append(ids, img)
		}
		for _, s := range p.Subcomponents {
			ids = append(ids, t.inImage(t.product("COMPONENT", s.ID), img))
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("the statement on %s names no product", name)
	}
	until, bounded, err := StatementUntil(st)
	if err != nil {
		return nil, err
	}
	stated := ptr(st.Timestamp.UTC().Format(time.RFC3339))
	v := &gocsaf.Vulnerability{ProductStatus: &gocsaf.ProductStatus{}}
	if cveID.MatchString(name) {
		v.CVE = ptr(gocsaf.CVE(name))
	} else {
		v.IDs = gocsaf.VulnerabilityIDs{{SystemName: ptr(aliasSystem(name)), Text: ptr(name)}}
	}
	switch st.Status {
	case vex.StatusNotAffected:
		v.ProductStatus.KnownNotAffected = products(ids...)
		label := gocsaf.FlagLabel(st.Justification)
		v.Flags = gocsaf.Flags{{Label: &label, Date: stated, ProductIds: products(ids...)}}
		impact := strings.TrimSpace(st.ImpactStatement)
		if notes := strings.TrimSpace(st.StatusNotes); notes != "" {
			impact = strings.TrimSuffix(impact, ".") + " (" + notes + ")."
		}
		v.Threats = gocsaf.Threats{{Category: ptr(gocsaf.CSAFThreatCategoryImpact), Date: stated, Details: ptr(impact), ProductIds: products(ids...)}}
	case vex.StatusAffected:
		v.ProductStatus.KnownAffected = products(ids...)
		v.Remediations = gocsaf.Remediations{{Category: ptr(gocsaf.CSAFRemediationCategoryMitigation), Date: stated,
			Details: ptr(strings.TrimSpace(st.ActionStatement)), ProductIds: products(ids...)}}
	case vex.StatusFixed:
		v.ProductStatus.Fixed = products(ids...)
	case vex.StatusUnderInvestigation:
		v.ProductStatus.UnderInvestigation = products(ids...)
	default:
		return nil, fmt.Errorf("the statement on %s has status %q", name, st.Status)
	}
	if bounded {
		v.Threats = append(v.Threats, untilThreat(until, products(ids...)))
	}
	return v, nil
}

// VEXTrackingID is the tracking id of a release's VEX document.
func VEXTrackingID(version string) string { return "RELOADER-VEX-" + version }

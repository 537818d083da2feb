package csaf

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	gocsaf "github.com/gocsaf/csaf/v3/csaf"

	"github.com/reloader-dev/reloader/internal/strict"
	"github.com/reloader-dev/reloader/release/support"
)

// CategoryAdvisory is the CSAF profile of a security advisory (§4.3).
const CategoryAdvisory = "csaf_security_advisory"

// product is how the documents name the project's module: the vendor
// branch, the product name, and its Go package URL.
const (
	productName = "reloader"
	modulePURL  = "pkg:golang/" + support.Module
)

var cveID = regexp.MustCompile(`^CVE-[0-9]{4}-[0-9]{4,}$`)

// FromOSV writes one OSV advisory as a CSAF 2.0 security advisory with the
// same identifier, dates and text: the affected versions as
// product_version_range branches (vers:semver, OSV's SEMVER events), the
// versions that fix it as product_version branches, a vendor fix naming
// them, and the OSV references as external references.
func FromOSV(a *support.Advisory, p Publisher) ([]byte, error) {
	published := a.Modified
	if a.Published != nil {
		published = *a.Published
	}
	title := a.ID
	if s := strings.TrimSpace(a.Summary); s != "" {
		title += ": " + s
	}
	doc := document(CategoryAdvisory, title, a.ID, p, published, a.Modified, "Initial version, from the OSV advisory "+a.ID+".")
	details := strings.TrimSpace(a.Details)
	if details == "" {
		details = strings.TrimSpace(a.Summary)
	}
	doc.Notes = gocsaf.Notes{{NoteCategory: ptr(gocsaf.CSAFNoteCategoryDescription), Title: ptr("Details"), Text: ptr(details)}}
	for _, s := range a.Severity {
		doc.Notes = append(doc.Notes, &gocsaf.Note{NoteCategory: ptr(gocsaf.CSAFNoteCategoryOther), Title: ptr("Severity (" + s.Type + ")"), Text: ptr(s.Score)})
	}
	ext := string(gocsaf.CSAFReferenceCategoryExternal)
	for _, r := range a.References {
		doc.References = append(doc.References, &gocsaf.Reference{ReferenceCategory: ptr(ext), Summary: ptr(r.Type + " reference of " + a.ID), URL: ptr(r.URL)})
	}
	if len(doc.References) == 0 {
		doc.References = gocsaf.References{{ReferenceCategory: ptr(ext), Summary: ptr("the project's source"), URL: ptr(p.Namespace)}}
	}
	tree, affected, fixed := osvProducts(a)
	v := &gocsaf.Vulnerability{
		Title:         ptr(strings.TrimSpace(a.Summary)),
		Notes:         gocsaf.Notes{{NoteCategory: ptr(gocsaf.CSAFNoteCategoryDescription), Text: ptr(details)}},
		ProductStatus: &gocsaf.ProductStatus{KnownAffected: products(affected...)},
		IDs:           gocsaf.VulnerabilityIDs{{SystemName: ptr("OSV"), Text: ptr(a.ID)}},
	}
	if v.Title != nil && *v.Title == "" {
		v.Title = nil
	}
	for _, al := range a.Aliases {
		if cveID.MatchString(al) && v.CVE == nil {
			v.CVE = ptr(gocsaf.CVE(al))
			continue
		}
		v.IDs = append(v.IDs, &gocsaf.VulnerabilityID{SystemName: ptr(aliasSystem(al)), Text: ptr(al)})
	}
	if len(fixed) > 0 {
		v.ProductStatus.Fixed = products(fixed...)
		v.Remediations = gocsaf.Remediations{{Category: ptr(gocsaf.CSAFRemediationCategoryVendorFix),
			Details: ptr("Upgrade to a release that fixes it: " + strings.Join(fixedVersions(a), ", ") + " or later in its series."), ProductIds: products(affected...)}}
	} else {
		v.Remediations = gocsaf.Remediations{{Category: ptr(gocsaf.CSAFRemediationCategoryNoneAvailable),
			Details: ptr("No release fixes it yet."), ProductIds: products(affected...)}}
	}
	if len(affected) == 0 {
		return nil, fmt.Errorf("CSAF advisory %s: the OSV advisory names no affected versions", a.ID)
	}
	return encode(&gocsaf.Advisory{Document: doc, ProductTree: tree, Vulnerabilities: gocsaf.Vulnerabilities{v}})
}

// aliasSystem names the database an alias comes from by its prefix
// ("GHSA-…" is GitHub's).
func aliasSystem(alias string) string {
	if p, _, ok := strings.Cut(alias, "-"); ok && p != "" {
		return p
	}
	return "alias"
}

// osvProducts is the product tree of an advisory: under the vendor and the
// product, a version range per OSV range and listed version, and a version
// per fixing release. It returns the affected and fixed product ids.
func osvProducts(a *support.Advisory) (*gocsaf.ProductTree, []string, []string) {
	var leaves gocsaf.Branches
	var affected, fixed []string
	leaf := func(cat gocsaf.BranchCategory, name, id, full, purl string) {
		fp := &gocsaf.FullProductName{Name: ptr(full), ProductID: ptr(gocsaf.ProductID(id)),
			ProductIdentificationHelper: &gocsaf.ProductIdentificationHelper{PURL: ptr(gocsaf.PURL(purl))}}
		leaves = append(leaves, &gocsaf.Branch{Category: ptr(cat), Name: ptr(name), Product: fp})
	}
	n := 0
	for _, af := range a.Affected {
		for _, r := range af.Ranges {
			vers := versRange(r.Events)
			if vers == "" {
				continue
			}
			n++
			id := fmt.Sprintf("%s-AFFECTED-%d", a.ID, n)
			leaf(gocsaf.CSAFBranchCategoryProductVersionRange, vers, id, productName+" "+strings.TrimPrefix(vers, "vers:semver/"), modulePURL)
			affected = append(affected, id)
		}
		for _, v := range af.Versions {
			n++
			id := fmt.Sprintf("%s-AFFECTED-%d", a.ID, n)
			leaf(gocsaf.CSAFBranchCategoryProductVersion, strings.TrimPrefix(v, "v"), id, productName+" "+v, modulePURL+"@"+v)
			affected = append(affected, id)
		}
	}
	for i, v := range fixedVersions(a) {
		id := fmt.Sprintf("%s-FIXED-%d", a.ID, i+1)
		leaf(gocsaf.CSAFBranchCategoryProductVersion, strings.TrimPrefix(v, "v"), id, productName+" "+v, modulePURL+"@"+v)
		fixed = append(fixed, id)
	}
	tree := &gocsaf.ProductTree{Branches: gocsaf.Branches{{
		Category: ptr(gocsaf.CSAFBranchCategoryVendor), Name: ptr("Reloader project"),
		Branches: gocsaf.Branches{{Category: ptr(gocsaf.CSAFBranchCategoryProductName), Name: ptr(productName), Branches: leaves}},
	}}}
	return tree, affected, fixed
}

// versRange writes OSV SEMVER events as a vers range (the version range
// specifier CSAF §3.1.2.3 recommends): introduced is >=, fixed and limit
// are <, last_affected is <=; "0" is the start of all versions.
func versRange(events []support.Event) string {
	var cs []string
	for _, e := range events {
		switch {
		case e.Introduced == "0":
			cs = append(cs, ">=0.0.0")
		case e.Introduced != "":
			cs = append(cs, ">="+strings.TrimPrefix(e.Introduced, "v"))
		case e.Fixed != "":
			cs = append(cs, "<"+strings.TrimPrefix(e.Fixed, "v"))
		case e.Limit != "":
			cs = append(cs, "<"+strings.TrimPrefix(e.Limit, "v"))
		case e.LastAffected != "":
			cs = append(cs, "<="+strings.TrimPrefix(e.LastAffected, "v"))
		}
	}
	if len(cs) == 0 {
		return ""
	}
	return "vers:semver/" + strings.Join(cs, "|")
}

func fixedVersions(a *support.Advisory) []string {
	var out []string
	for _, af := range a.Affected {
		for _, r := range af.Ranges {
			for _, e := range r.Events {
				if e.Fixed != "" {
					out = append(out, "v"+strings.TrimPrefix(e.Fixed, "v"))
				}
			}
		}
	}
	return out
}

// ErrNotAdvisory is a valid CSAF document of another profile (a VEX
// document), which marks no release affected.
var ErrNotAdvisory = errors.New("not a CSAF security advisory")

// maxDocumentBytes bounds one CSAF document, as support bounds an OSV one.
const maxDocumentBytes = 1 << 20

// IsCSAF reports whether a JSON document is CSAF (it has a "document"
// object), as opposed to OSV.
func IsCSAF(data []byte) bool {
	return bytes.Contains(data, []byte(`"document"`)) && bytes.Contains(data, []byte(`"csaf_version"`))
}

// ParseAdvisory reads a CSAF 2.0 security advisory for the advisory
// judgment: strictly decoded, valid against the schema and the library's
// model checks, and turned into what an OSV advisory would say (its id,
// dates, summary, aliases, and the affected versions from the
// product_version_range and product_version branches it marks
// known_affected). A VEX document or any other profile is refused: it
// marks no release affected.
func ParseAdvisory(data []byte) (*support.Advisory, error) {
	var adv gocsaf.Advisory
	if err := strict.JSON(data, "CSAF", maxDocumentBytes, &adv); err != nil {
		return nil, err
	}
	if err := adv.Validate(); err != nil {
		return nil, fmt.Errorf("invalid CSAF document: %w", err)
	}
	if err := Validate(data); err != nil {
		return nil, err
	}
	d := adv.Document
	if string(*d.Category) != CategoryAdvisory {
		return nil, fmt.Errorf("%w: CSAF document %s is a %s, not a %s", ErrNotAdvisory, *d.Tracking.ID, *d.Category, CategoryAdvisory)
	}
	a := &support.Advisory{ID: string(*d.Tracking.ID), Summary: *d.Title}
	var err error
	if a.Modified, err = time.Parse(time.RFC3339, *d.Tracking.CurrentReleaseDate); err != nil {
		return nil, fmt.Errorf("CSAF document %s: current_release_date: %w", a.ID, err)
	}
	if pub, err := time.Parse(time.RFC3339, *d.Tracking.InitialReleaseDate); err == nil {
		a.Published = &pub
	}
	ranges := map[string]gocsaf.Branch{}
	walkBranches(adv.ProductTree, func(b *gocsaf.Branch) {
		if b.Product != nil && b.Product.ProductID != nil {
			ranges[string(*b.Product.ProductID)] = *b
		}
	})
	af := support.Affected{Package: support.Package{Ecosystem: "Go", Name: support.Module}}
	for _, v := range adv.Vulnerabilities {
		if v.CVE != nil {
			a.Aliases = append(a.Aliases, string(*v.CVE))
		}
		for _, id := range v.IDs {
			if id != nil && id.Text != nil && *id.Text != a.ID {
				a.Aliases = append(a.Aliases, *id.Text)
			}
		}
		if v.ProductStatus == nil || v.ProductStatus.KnownAffected == nil {
			continue
		}
		for _, pid := range *v.ProductStatus.KnownAffected {
			if err := addAffected(&af, ranges[string(*pid)]); err != nil {
				return nil, fmt.Errorf("CSAF advisory %s: product %s: %w", a.ID, *pid, err)
			}
		}
	}
	if len(af.Ranges) == 0 && len(af.Versions) == 0 {
		return nil, fmt.Errorf("CSAF advisory %s marks no version of %s known_affected", a.ID, productName)
	}
	a.Affected = []support.Affected{af}
	a.Raw = append([]byte(nil), data...)
	return a, nil
}

// addAffected adds what one affected product's branch says.
func addAffected(af *support.Affected, b gocsaf.Branch) error {
	if b.Category == nil || b.Name == nil {
		return errors.New("not a version of the product in the product tree")
	}
	switch *b.Category {
	case gocsaf.CSAFBranchCategoryProductVersion:
		af.Versions = append(af.Versions, "v"+strings.TrimPrefix(*b.Name, "v"))
		return nil
	case gocsaf.CSAFBranchCategoryProductVersionRange:
		events, err := versEvents(*b.Name)
		if err != nil {
			return err
		}
		af.Ranges = append(af.Ranges, support.Range{Type: "SEMVER", Events: events})
		return nil
	}
	return fmt.Errorf("branch category %s names no version", *b.Category)
}

// versEvents reads a vers:semver range back into OSV events.
func versEvents(vers string) ([]support.Event, error) {
	rest, ok := strings.CutPrefix(vers, "vers:semver/")
	if !ok {
		return nil, fmt.Errorf("version range %q is not vers:semver", vers)
	}
	var events []support.Event
	for _, c := range strings.Split(rest, "|") {
		switch {
		case strings.HasPrefix(c, ">="):
			v := strings.TrimPrefix(c, ">=")
			if v == "0.0.0" {
				v = "0"
			}
			events = append(events, support.Event{Introduced: v})
		case strings.HasPrefix(c, "<="):
			events = append(events, support.Event{LastAffected: strings.TrimPrefix(c, "<=")})
		case strings.HasPrefix(c, "<"):
			events = append(events, support.Event{Fixed: strings.TrimPrefix(c, "<")})
		default:
			return nil, fmt.Errorf("version range %q: constraint %q is none of >=, <, <=", vers, c)
		}
	}
	if len(events) == 0 || events[0].Introduced == "" {
		return nil, fmt.Errorf("version range %q does not start with >=", vers)
	}
	return events, nil
}

func walkBranches(t *gocsaf.ProductTree, f func(*gocsaf.Branch)) {
	if t == nil {
		return
	}
	var walk func(gocsaf.Branches)
	walk = func(bs gocsaf.Branches) {
		for _, b := range bs {
			if b == nil {
				continue
			}
			f(b)
			walk(b.Branches)
		}
	}
	walk(t.Branches)
}

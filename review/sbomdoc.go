package review

import (
	"bytes"
	"fmt"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
	spdxjson "github.com/spdx/tools-golang/json"
	"github.com/spdx/tools-golang/spdx"
)

// Media types of the SBOM documents a release publishes.
const (
	MediaTypeSPDX      = "application/spdx+json"
	MediaTypeCycloneDX = "application/vnd.cyclonedx+json"
)

// maxSBOMBytes bounds one SBOM document: a distro image's SBOM is a few MiB.
const maxSBOMBytes = 64 << 20

// noAssertion is SPDX's "the author of this document does not know".
const noAssertion = "NOASSERTION"

// Document is one SBOM reduced to what a review needs.
type Document struct {
	// Format is "SPDX-2.3" or "CycloneDX 1.7".
	Format string
	// Components are the packages the SBOM lists, without the image itself.
	Components []Component
	// facts are the document-level fields it carries, evidence per
	// component the component-level fields only a profile check reads;
	// evidence[i] describes Components[i].
	facts    map[field]bool
	evidence []evidence
	// securityContact is the SBOM creator's contact (a URL or an email
	// address) and securityTxt the producer's security.txt URL, "" when
	// the document names none.
	securityContact, securityTxt string
}

// evidence is what a component carries beyond what Component holds.
type evidence struct {
	// hashes are the algorithms of its hashes, as CycloneDX names them
	// ("SHA-256").
	hashes []string
	// related: the SBOM relates it to another component (contains,
	// depends on, or the reverse).
	related bool
	// creatorContact: its supplier or creator has an email address or URL.
	creatorContact bool
	// filename: the SBOM names its file.
	filename bool
	// What BSI TR-03183-2 v2.1.0 adds (bsi.go): a SHA-512 of the file the
	// component is deployed in, that file's properties, the source and
	// deployable URIs, and the original and concluded licences apart.
	deployableSHA512                  bool
	fileKind                          map[field]bool
	sourceURI, deployableURI          bool
	licenceOriginal, licenceConcluded bool
}

// MissingElement is one minimum element of a profile an SBOM does not
// carry.
type MissingElement struct {
	// Element is the name the profile's document gives it ("Supplier
	// Name", "Component Hash", "Component creator").
	Element string `json:"element"`
	// Source is the document and section it comes from.
	Source string `json:"source,omitempty"`
	// Detail says how much is missing and names the components.
	Detail string `json:"detail"`
	// Components are the labels (name@version) of every component that
	// lacks a component element, for the page's list by component.
	Components []string `json:"components,omitempty"`
}

// ParseSBOM reads an SPDX JSON document with spdx/tools-golang or a
// CycloneDX JSON document with CycloneDX/cyclonedx-go, keeping what the
// minimum-elements profiles check (Document.Check). what names the
// document in errors.
func ParseSBOM(mediaType string, data []byte, what string) (*Document, error) {
	if len(data) > maxSBOMBytes {
		return nil, fmt.Errorf("SBOM %s is %d bytes, more than the %d accepted", what, len(data), maxSBOMBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("SBOM %s is empty", what)
	}
	switch mediaType {
	case MediaTypeSPDX:
		doc, err := readSPDX(data)
		if err != nil {
			return nil, fmt.Errorf("parsing the SPDX SBOM %s: %w", what, err)
		}
		return fromSPDX(doc, what)
	case MediaTypeSPDX3:
		doc, err := readSPDX3(data)
		if err != nil {
			return nil, fmt.Errorf("parsing the SPDX 3 SBOM %s: %w", what, err)
		}
		return fromSPDX3(doc, what)
	case MediaTypeCycloneDX:
		var bom cdx.BOM
		if err := cdx.NewBOMDecoder(bytes.NewReader(data), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
			return nil, fmt.Errorf("parsing the CycloneDX SBOM %s: %w", what, err)
		}
		return fromCycloneDX(&bom, what)
	}
	return nil, fmt.Errorf("SBOM %s has media type %q, none of %s, %s and %s", what, mediaType, MediaTypeSPDX, MediaTypeSPDX3, MediaTypeCycloneDX)
}

// readSPDX runs tools-golang's reader, which panics on some malformed
// documents (a null package): a hostile SBOM must be an error, not a crash.
func readSPDX(data []byte) (doc *spdx.Document, err error) {
	defer func() {
		if p := recover(); p != nil {
			doc, err = nil, fmt.Errorf("malformed document (the SPDX reader failed: %v)", p)
		}
	}()
	return spdxjson.Read(bytes.NewReader(data))
}

// fromSPDX reads what the review needs of an SPDX document. It stays whole:
// each field it reads maps to one minimum element, and the list reads best
// beside fromCycloneDX's in the same order.
func fromSPDX(doc *spdx.Document, what string) (*Document, error) {
	if doc == nil || doc.SPDXVersion == "" {
		return nil, fmt.Errorf("SPDX SBOM %s has no spdxVersion", what)
	}
	d := &Document{Format: doc.SPDXVersion, facts: map[field]bool{}}
	described := map[string]bool{}
	related := map[string]bool{}
	for _, r := range doc.Relationships {
		if r == nil {
			continue
		}
		a, b := string(r.RefA.ElementRefID), string(r.RefB.ElementRefID)
		switch strings.ToUpper(r.Relationship) {
		case "DESCRIBES":
			if a == "DOCUMENT" {
				described[b] = true
			}
		case "CONTAINS", "DEPENDS_ON", "DEPENDENCY_OF", "DYNAMIC_LINK", "STATIC_LINK", "RUNTIME_DEPENDENCY_OF", "BUILD_DEPENDENCY_OF", "CONTAINED_BY":
			if a != b {
				related[a], related[b] = true, true
			}
		}
	}
	for _, p := range doc.Packages {
		if p == nil {
			return nil, fmt.Errorf("SPDX SBOM %s lists a null package", what)
		}
		// The package the document describes is the image, not a component.
		id := string(p.PackageSPDXIdentifier)
		if described[id] {
			continue
		}
		c := Component{Name: p.PackageName, Version: p.PackageVersion, Source: sourceOf(purlOf(p), p.PackageSourceInfo)}
		c.PURL = purlOf(p)
		c.CPE = cpeOf(p)
		e := evidence{related: related[id], filename: strings.TrimSpace(p.PackageFileName) != ""}
		if p.PackageSupplier != nil && p.PackageSupplier.Supplier != noAssertion {
			c.Supplier = strings.TrimSpace(p.PackageSupplier.SupplierType + ": " + p.PackageSupplier.Supplier)
			c.Supplier = strings.TrimPrefix(c.Supplier, ": ")
			e.creatorContact = hasEmail(p.PackageSupplier.Supplier)
		}
		if o := p.PackageOriginator; o != nil && hasEmail(o.Originator) {
			e.creatorContact = true
		}
		for _, h := range p.PackageChecksums {
			if strings.TrimSpace(h.Value) != "" {
				e.hashes = append(e.hashes, spdxAlgorithm(string(h.Algorithm)))
			}
		}
		e.licenceOriginal = licenceOrEmpty(p.PackageLicenseDeclared) != ""
		e.licenceConcluded = licenceOrEmpty(p.PackageLicenseConcluded) != ""
		c.LicenceDeclared = licenceOrEmpty(p.PackageLicenseDeclared)
		if c.LicenceDeclared == "" {
			c.LicenceDeclared = licenceOrEmpty(p.PackageLicenseConcluded)
		}
		d.Components = append(d.Components, c)
		d.evidence = append(d.evidence, e)
	}
	d.facts[fieldSBOMURI] = strings.TrimSpace(doc.DocumentNamespace) != ""
	d.facts[fieldNoVulnerabilities] = !spdxSecurityRefs(doc)
	if ci := doc.CreationInfo; ci != nil {
		d.facts[fieldTimestamp] = strings.TrimSpace(ci.Created) != ""
		// SPDX 2 has no field for the lifecycle phase: the creation
		// comment carries it (as sbomqs and the CISA mapping read it).
		d.facts[fieldContext] = strings.TrimSpace(ci.CreatorComment) != ""
		for _, c := range ci.Creators {
			who := strings.TrimSpace(c.Creator)
			if who == "" {
				continue
			}
			switch c.CreatorType {
			case "Organization", "Person":
				d.facts[fieldAuthor] = true
				if hasEmail(who) {
					d.facts[fieldAuthorContact] = true
				}
			case "Tool":
				d.facts[fieldTool] = true
			}
		}
	}
	return d, nil
}

// spdxSecurityRefs reports a package with a SECURITY external reference
// to an advisory, a fix or a vulnerability URL, SPDX 2's only
// vulnerability data (CPEs are in that category too, and are identifiers).
func spdxSecurityRefs(doc *spdx.Document) bool {
	for _, p := range doc.Packages {
		if p == nil {
			continue
		}
		for _, r := range p.PackageExternalReferences {
			if r != nil && strings.EqualFold(r.Category, "SECURITY") && (r.RefType == "advisory" || r.RefType == "fix" || r.RefType == "url") {
				return true
			}
		}
	}
	return false
}

// hasEmail reports an SPDX "name (email)" actor with an email address.
func hasEmail(actor string) bool {
	open := strings.LastIndex(actor, "(")
	return open >= 0 && strings.Contains(actor[open:], "@") && strings.HasSuffix(strings.TrimSpace(actor), ")")
}

// spdxAlgorithm names an SPDX checksum algorithm ("SHA256") as CycloneDX
// does ("SHA-256"), so both formats are checked alike.
func spdxAlgorithm(a string) string {
	a = strings.ToUpper(strings.TrimSpace(a))
	if rest, ok := strings.CutPrefix(a, "SHA"); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
		return "SHA-" + rest
	}
	return a
}

func purlOf(p *spdx.Package) string {
	for _, r := range p.PackageExternalReferences {
		if r != nil && strings.EqualFold(r.RefType, "purl") {
			return r.Locator
		}
	}
	return ""
}

func cpeOf(p *spdx.Package) string {
	for _, r := range p.PackageExternalReferences {
		if r != nil && strings.HasPrefix(strings.ToLower(r.RefType), "cpe") {
			return r.Locator
		}
	}
	return ""
}

// fromCycloneDX is fromSPDX for CycloneDX: the same facts, in the same
// order, from that format's fields.
func fromCycloneDX(bom *cdx.BOM, what string) (*Document, error) {
	if bom.BOMFormat != "CycloneDX" {
		return nil, fmt.Errorf("CycloneDX SBOM %s has bomFormat %q", what, bom.BOMFormat)
	}
	d := &Document{Format: "CycloneDX " + bom.SpecVersion.String(), facts: map[field]bool{}}
	related := map[string]bool{}
	if bom.Dependencies != nil {
		for _, dep := range *bom.Dependencies {
			if dep.Dependencies == nil {
				continue
			}
			for _, on := range *dep.Dependencies {
				if on != "" && on != dep.Ref {
					related[dep.Ref], related[on] = true, true
				}
			}
		}
	}
	if bom.Components != nil {
		for _, k := range *bom.Components {
			// Files are what packages were found in, not components; SPDX
			// lists them apart from packages too.
			// So is the operating system syft reads from os-release: it
			// describes the base image, whose packages are components,
			// and the SPDX document does not list it as a package.
			if k.Type == cdx.ComponentTypeFile || k.Type == cdx.ComponentTypeOS {
				continue
			}
			c := Component{Name: k.Name, Version: k.Version, PURL: k.PackageURL, CPE: k.CPE}
			e := evidence{related: k.BOMRef != "" && related[k.BOMRef]}
			if k.Supplier != nil && strings.TrimSpace(k.Supplier.Name) != "" {
				c.Supplier = k.Supplier.Name
			}
			e.creatorContact = hasContact(k.Supplier) || hasContact(k.Manufacturer)
			if k.Hashes != nil {
				for _, h := range *k.Hashes {
					if strings.TrimSpace(h.Value) != "" {
						e.hashes = append(e.hashes, strings.ToUpper(string(h.Algorithm)))
					}
				}
			}
			c.LicenceDeclared = cdxLicence(k.Licenses)
			loc := ""
			if k.Properties != nil {
				for _, p := range *k.Properties {
					switch p.Name {
					case "syft:location:0:path":
						loc = p.Value
					case "bsi:component:filename":
						e.filename = strings.TrimSpace(p.Value) != ""
					}
				}
			}
			c.Source = sourceOf(c.PURL, loc)
			cdxEvidence(k, &e)
			d.Components = append(d.Components, c)
			d.evidence = append(d.evidence, e)
		}
	}
	cdxDocumentFacts(bom, d)
	if md := bom.Metadata; md != nil {
		d.facts[fieldTimestamp] = strings.TrimSpace(md.Timestamp) != ""
		d.facts[fieldAuthor] = md.Authors != nil && len(*md.Authors) > 0 ||
			md.Manufacturer != nil && md.Manufacturer.Name != "" ||
			md.Supplier != nil && md.Supplier.Name != ""
		d.facts[fieldAuthorContact] = hasContact(md.Manufacturer) || hasContact(md.Supplier)
		if md.Authors != nil {
			for _, a := range *md.Authors {
				if strings.Contains(a.Email, "@") {
					d.facts[fieldAuthorContact] = true
				}
			}
		}
		if t := md.Tools; t != nil {
			d.facts[fieldTool] = t.Components != nil && len(*t.Components) > 0 ||
				t.Services != nil && len(*t.Services) > 0 ||
				t.Tools != nil && len(*t.Tools) > 0
		}
		if md.Lifecycles != nil {
			for _, l := range *md.Lifecycles {
				if l.Phase != "" || strings.TrimSpace(l.Name) != "" {
					d.facts[fieldContext] = true
				}
			}
		}
	}
	return d, nil
}

// hasContact reports an organisation with a URL or a contact's email.
func hasContact(o *cdx.OrganizationalEntity) bool {
	if o == nil {
		return false
	}
	if o.URL != nil {
		for _, u := range *o.URL {
			if strings.TrimSpace(u) != "" {
				return true
			}
		}
	}
	if o.Contact != nil {
		for _, c := range *o.Contact {
			if strings.Contains(c.Email, "@") {
				return true
			}
		}
	}
	return false
}

// cdxLicence joins a CycloneDX licence choice into one SPDX expression:
// the licences as declared (or unacknowledged), not those concluded, which
// a review compares with the declared ones apart.
func cdxLicence(ls *cdx.Licenses) string {
	if ls == nil {
		return ""
	}
	var parts []string
	for _, l := range *ls {
		if licenceAcknowledgement(l) == cdx.LicenseAcknowledgementConcluded {
			continue
		}
		switch {
		case l.Expression != "":
			parts = append(parts, l.Expression)
		case l.License != nil && l.License.ID != "":
			parts = append(parts, l.License.ID)
		case l.License != nil && l.License.Name != "":
			parts = append(parts, l.License.Name)
		}
	}
	if len(parts) > 1 {
		for i, p := range parts {
			if strings.ContainsAny(p, " ") {
				parts[i] = "(" + p + ")"
			}
		}
	}
	return strings.Join(parts, " AND ")
}

func licenceOrEmpty(s string) string {
	s = strings.TrimSpace(s)
	if s == noAssertion || s == "NONE" {
		return ""
	}
	return s
}

// sourceOf says where a component was found: the package ecosystem from its
// PURL, and the file syft read it from.
func sourceOf(purl, location string) string {
	kind := "file"
	switch {
	case strings.HasPrefix(purl, "pkg:golang/"):
		kind = "Go module"
	case strings.HasPrefix(purl, "pkg:rpm/"):
		kind = "RPM"
	case strings.HasPrefix(purl, "pkg:deb/"):
		kind = "Debian package"
	case strings.HasPrefix(purl, "pkg:apk/"):
		kind = "Alpine package"
	case purl != "":
		kind = strings.SplitN(strings.TrimPrefix(purl, "pkg:"), "/", 2)[0] + " package"
	}
	// syft's SPDX sourceInfo is "acquired package info from <what>: <path>".
	if i := strings.LastIndex(location, ": "); i >= 0 {
		location = location[i+2:]
	}
	if location = strings.TrimSpace(location); location != "" {
		return kind + " in " + location
	}
	return kind
}

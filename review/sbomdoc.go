package review

import (
	"bytes"
	"fmt"
	"sort"
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
	// Missing lists the NTIA minimum elements the document lacks.
	Missing []MissingElement
}

// MissingElement is one NTIA minimum element an SBOM does not carry.
type MissingElement struct {
	// Element is one of the NTIA names: "Supplier Name", "Component Name",
	// "Version of the Component", "Other Unique Identifiers", "Dependency
	// Relationship", "Author of SBOM Data", "Timestamp".
	Element string `json:"element"`
	// Detail says how much is missing and names examples.
	Detail string `json:"detail"`
}

// The NTIA minimum data fields (The Minimum Elements For a Software Bill
// of Materials, NTIA 2021), in the order the report lists them.
const (
	ElementSupplier     = "Supplier Name"
	ElementName         = "Component Name"
	ElementVersion      = "Version of the Component"
	ElementIdentifier   = "Other Unique Identifiers"
	ElementRelationship = "Dependency Relationship"
	ElementAuthor       = "Author of SBOM Data"
	ElementTimestamp    = "Timestamp"
)

// ParseSBOM reads an SPDX JSON document with spdx/tools-golang or a
// CycloneDX JSON document with CycloneDX/cyclonedx-go, and checks the NTIA
// minimum elements. what names the document in errors.
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
	case MediaTypeCycloneDX:
		var bom cdx.BOM
		if err := cdx.NewBOMDecoder(bytes.NewReader(data), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
			return nil, fmt.Errorf("parsing the CycloneDX SBOM %s: %w", what, err)
		}
		return fromCycloneDX(&bom, what)
	}
	return nil, fmt.Errorf("SBOM %s has media type %q, neither %s nor %s", what, mediaType, MediaTypeSPDX, MediaTypeCycloneDX)
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

func fromSPDX(doc *spdx.Document, what string) (*Document, error) {
	if doc == nil || doc.SPDXVersion == "" {
		return nil, fmt.Errorf("SPDX SBOM %s has no spdxVersion", what)
	}
	d := &Document{Format: doc.SPDXVersion}
	described := map[string]bool{}
	hasDeps := false
	for _, r := range doc.Relationships {
		if r == nil {
			continue
		}
		switch strings.ToUpper(r.Relationship) {
		case "DESCRIBES":
			if string(r.RefA.ElementRefID) == "DOCUMENT" {
				described[string(r.RefB.ElementRefID)] = true
			}
		case "CONTAINS", "DEPENDS_ON", "DEPENDENCY_OF", "DYNAMIC_LINK", "STATIC_LINK", "RUNTIME_DEPENDENCY_OF", "BUILD_DEPENDENCY_OF", "CONTAINED_BY":
			hasDeps = true
		}
	}
	for _, p := range doc.Packages {
		if p == nil {
			return nil, fmt.Errorf("SPDX SBOM %s lists a null package", what)
		}
		// The package the document describes is the image, not a component.
		if described[string(p.PackageSPDXIdentifier)] {
			continue
		}
		c := Component{Name: p.PackageName, Version: p.PackageVersion, Source: sourceOf(purlOf(p), p.PackageSourceInfo)}
		c.PURL = purlOf(p)
		c.CPE = cpeOf(p)
		if p.PackageSupplier != nil && p.PackageSupplier.Supplier != noAssertion {
			c.Supplier = strings.TrimSpace(p.PackageSupplier.SupplierType + ": " + p.PackageSupplier.Supplier)
			c.Supplier = strings.TrimPrefix(c.Supplier, ": ")
		}
		c.LicenceDeclared = licenceOrEmpty(p.PackageLicenseDeclared)
		if c.LicenceDeclared == "" {
			c.LicenceDeclared = licenceOrEmpty(p.PackageLicenseConcluded)
		}
		d.Components = append(d.Components, c)
	}
	var author, timestamp bool
	if ci := doc.CreationInfo; ci != nil {
		timestamp = strings.TrimSpace(ci.Created) != ""
		for _, c := range ci.Creators {
			if (c.CreatorType == "Organization" || c.CreatorType == "Person") && strings.TrimSpace(c.Creator) != "" {
				author = true
			}
		}
	}
	d.Missing = minimumElements(d.Components, hasDeps, author, timestamp)
	return d, nil
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

func fromCycloneDX(bom *cdx.BOM, what string) (*Document, error) {
	if bom.BOMFormat != "CycloneDX" {
		return nil, fmt.Errorf("CycloneDX SBOM %s has bomFormat %q", what, bom.BOMFormat)
	}
	d := &Document{Format: "CycloneDX " + bom.SpecVersion.String()}
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
			if k.Supplier != nil && strings.TrimSpace(k.Supplier.Name) != "" {
				c.Supplier = k.Supplier.Name
			}
			c.LicenceDeclared = cdxLicence(k.Licenses)
			loc := ""
			if k.Properties != nil {
				for _, p := range *k.Properties {
					if p.Name == "syft:location:0:path" {
						loc = p.Value
					}
				}
			}
			c.Source = sourceOf(c.PURL, loc)
			d.Components = append(d.Components, c)
		}
	}
	hasDeps := false
	if bom.Dependencies != nil {
		for _, dep := range *bom.Dependencies {
			if dep.Dependencies != nil && len(*dep.Dependencies) > 0 {
				hasDeps = true
			}
		}
	}
	var author, timestamp bool
	if md := bom.Metadata; md != nil {
		timestamp = strings.TrimSpace(md.Timestamp) != ""
		author = md.Authors != nil && len(*md.Authors) > 0 ||
			md.Manufacturer != nil && md.Manufacturer.Name != "" ||
			md.Supplier != nil && md.Supplier.Name != ""
	}
	d.Missing = minimumElements(d.Components, hasDeps, author, timestamp)
	return d, nil
}

// cdxLicence joins a CycloneDX licence choice into one SPDX expression.
func cdxLicence(ls *cdx.Licenses) string {
	if ls == nil {
		return ""
	}
	var parts []string
	for _, l := range *ls {
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

func minimumElements(cs []Component, hasDeps, author, timestamp bool) []MissingElement {
	var out []MissingElement
	count := func(element string, lacks func(Component) bool, noun string) {
		var names []string
		for _, c := range cs {
			if lacks(c) {
				names = append(names, c.Name)
			}
		}
		if len(names) == 0 {
			return
		}
		sort.Strings(names)
		ex := names
		if len(ex) > 5 {
			ex = append(ex[:5:5], "…")
		}
		out = append(out, MissingElement{Element: element,
			Detail: fmt.Sprintf("%d of %d components have no %s: %s", len(names), len(cs), noun, strings.Join(ex, ", "))})
	}
	count(ElementSupplier, func(c Component) bool { return c.Supplier == "" }, "supplier")
	count(ElementName, func(c Component) bool { return strings.TrimSpace(c.Name) == "" }, "name")
	count(ElementVersion, func(c Component) bool { return strings.TrimSpace(c.Version) == "" }, "version")
	count(ElementIdentifier, func(c Component) bool { return c.PURL == "" && c.CPE == "" }, "PURL or CPE")
	if len(cs) == 0 {
		out = append(out, MissingElement{Element: ElementName, Detail: "the SBOM lists no components"})
	}
	if !hasDeps {
		out = append(out, MissingElement{Element: ElementRelationship, Detail: "no relationship between components is recorded"})
	}
	if !author {
		out = append(out, MissingElement{Element: ElementAuthor, Detail: "no person or organisation is named as the SBOM's author (a tool alone is not an author)"})
	}
	if !timestamp {
		out = append(out, MissingElement{Element: ElementTimestamp, Detail: "no creation time"})
	}
	return out
}

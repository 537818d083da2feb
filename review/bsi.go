package review

import (
	"fmt"
	"strconv"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// The CycloneDX properties of BSI TR-03183-2's component fields (the "bsi"
// namespace of the CycloneDX property taxonomy) and the values each allows.
const (
	PropertyFilenameName   = "bsi:component:filename"
	PropertyExecutableName = "bsi:component:executable"
	PropertyArchiveName    = "bsi:component:archive"
	PropertyStructuredName = "bsi:component:structured"
)

var fileKindValues = map[string]struct {
	f      field
	values []string
}{
	PropertyExecutableName: {fieldExecutable, []string{"executable", "non-executable"}},
	PropertyArchiveName:    {fieldArchive, []string{"archive", "no archive"}},
	PropertyStructuredName: {fieldStructured, []string{"structured", "unstructured"}},
}

// formatChecked says whether profile p is checked on a document of format
// ("CycloneDX 1.7", "SPDX-2.3", "SPDX-3.0.1"), and when not, why. BSI
// TR-03183-2 v2.1.0 §4 allows CycloneDX 1.6 or later and SPDX 3.0.1 or
// later; SPDX 2 is no longer allowed. This is the only place the format is
// judged.
func formatChecked(p Profile, format string) (bool, string) {
	if p != ProfileBSI {
		return true, ""
	}
	name, version := splitFormat(format)
	switch {
	case name == "CycloneDX" && versionAtLeast(version, 1, 6):
		return true, ""
	case name == "SPDX" && versionAtLeast(version, 3, 0) && version != "3.0" && version != "3.0.0":
		// fromSPDX3 reads BSI's fields by the TR's SPDX 3.0.1 mapping
		// (spdx3Evidence), so a reviewer holding only SPDX 3 documents
		// can run the profile.
		return true, ""
	}
	return false, fmt.Sprintf("%s is not a format BSI TR-03183-2 v2.1.0 allows (§4: CycloneDX 1.6 or later, SPDX 3.0.1 or later); the image's other documents are checked", format)
}

// formatElement is what an image lacks when none of its SBOMs is in a
// format the profile allows.
func formatElement() MissingElement {
	return MissingElement{Element: "SBOM format", Source: "BSI TR-03183-2 v2.1.0 §4",
		Detail: "no SBOM of the image is CycloneDX 1.6 or later or SPDX 3.0.1 or later"}
}

// splitFormat reads "CycloneDX 1.7" and "SPDX-2.3" as a name and version.
func splitFormat(format string) (name, version string) {
	if n, v, ok := strings.Cut(format, " "); ok {
		return n, v
	}
	if n, v, ok := strings.Cut(format, "-"); ok {
		return n, v
	}
	return format, ""
}

func versionAtLeast(v string, major, minor int) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > major || ma == major && mi >= minor
}

// cdxEvidence reads what BSI TR-03183-2 v2.1.0 asks of a CycloneDX
// component beyond the fields fromCycloneDX reads, by the mapping of the
// TR's CycloneDX appendix: a SHA-512 of the deployable file (on the
// distribution reference, or the component's own hash), the bsi:component
// properties, source-distribution and distribution URLs, and the licences
// by acknowledgement (an unacknowledged licence counts as declared).
func cdxEvidence(k cdx.Component, e *evidence) {
	e.fileKind = map[field]bool{}
	if k.Hashes != nil {
		for _, h := range *k.Hashes {
			e.deployableSHA512 = e.deployableSHA512 || h.Algorithm == cdx.HashAlgoSHA512 && strings.TrimSpace(h.Value) != ""
		}
	}
	if k.ExternalReferences != nil {
		for _, r := range *k.ExternalReferences {
			if strings.TrimSpace(r.URL) == "" {
				continue
			}
			switch r.Type {
			case cdx.ERTypeSourceDistribution, cdx.ERTypeVCS:
				e.sourceURI = true
			case cdx.ERTypeDistribution:
				e.deployableURI = true
				if r.Hashes != nil {
					for _, h := range *r.Hashes {
						e.deployableSHA512 = e.deployableSHA512 || h.Algorithm == cdx.HashAlgoSHA512 && strings.TrimSpace(h.Value) != ""
					}
				}
			}
		}
	}
	if k.Properties != nil {
		for _, p := range *k.Properties {
			if kv, ok := fileKindValues[p.Name]; ok {
				for _, v := range kv.values {
					e.fileKind[kv.f] = e.fileKind[kv.f] || strings.TrimSpace(p.Value) == v
				}
			}
		}
	}
	if k.Licenses != nil {
		for _, l := range *k.Licenses {
			if licenceText(l) == "" {
				continue
			}
			switch licenceAcknowledgement(l) {
			case cdx.LicenseAcknowledgementConcluded:
				e.licenceConcluded = true
			default:
				e.licenceOriginal = true
			}
		}
	}
}

// licenceAcknowledgement is a licence choice's acknowledgement, on the
// expression or on the licence.
func licenceAcknowledgement(l cdx.LicenseChoice) cdx.LicenseAcknowledgement {
	if l.Acknowledgement != nil {
		return *l.Acknowledgement
	}
	if l.License != nil {
		return l.License.Acknowledgement
	}
	return ""
}

func licenceText(l cdx.LicenseChoice) string {
	switch {
	case l.Expression != "":
		return l.Expression
	case l.License != nil && l.License.ID != "":
		return l.License.ID
	case l.License != nil:
		return l.License.Name
	}
	return ""
}

// cdxDocumentFacts reads the SBOM's own URI (its serial number, a URN
// BOM-Link resolves) and whether it carries vulnerability data.
func cdxDocumentFacts(bom *cdx.BOM, d *Document) {
	d.facts[fieldSBOMURI] = strings.HasPrefix(bom.SerialNumber, "urn:")
	d.facts[fieldNoVulnerabilities] = bom.Vulnerabilities == nil || len(*bom.Vulnerabilities) == 0
	if md := bom.Metadata; md != nil && md.Manufacturer != nil {
		d.securityContact = contactOf(md.Manufacturer)
	}
	if bom.Components == nil {
		return
	}
	for _, k := range *bom.Components {
		if k.ExternalReferences == nil {
			continue
		}
		for _, r := range *k.ExternalReferences {
			if r.Type == cdx.ERTypeRFC9116 && d.securityTxt == "" {
				d.securityTxt = r.URL
			}
		}
	}
}

// contactOf is an organisation's first URL, else its first email address.
func contactOf(o *cdx.OrganizationalEntity) string {
	if o.URL != nil {
		for _, u := range *o.URL {
			if strings.TrimSpace(u) != "" {
				return u
			}
		}
	}
	if o.Contact != nil {
		for _, c := range *o.Contact {
			if strings.Contains(c.Email, "@") {
				return c.Email
			}
		}
	}
	return ""
}

// ProfilePassed reports whether every SBOM the profile was checked on
// carries every element.
func (r *Review) ProfilePassed() bool {
	for _, c := range r.MinimumElements {
		if len(c.Missing) > 0 {
			return false
		}
	}
	return true
}

// ComponentMissing is one component and the profile's elements it lacks
// in one SBOM, a row of the page's list by component.
type ComponentMissing struct {
	Component string
	Image     string
	Format    string
	Elements  []string
}

// MissingByComponent lists, for each component that lacks an element, the
// elements it lacks, by image and document, in the order of the checks.
func (r *Review) MissingByComponent() []ComponentMissing {
	var out []ComponentMissing
	for _, c := range r.MinimumElements {
		at := map[string]int{}
		for _, m := range c.Missing {
			for _, comp := range m.Components {
				i, ok := at[comp]
				if !ok {
					i = len(out)
					at[comp] = i
					out = append(out, ComponentMissing{Component: comp, Image: c.Image + " " + c.Platform, Format: c.Format})
				}
				out[i].Elements = append(out[i].Elements, m.Element)
			}
		}
	}
	return out
}

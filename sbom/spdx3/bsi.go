package spdx3

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	v3 "github.com/spdx/tools-golang/spdx/v3/v3_0"
)

// Facts is what BSI TR-03183-2 v2.1.0 asks of an SBOM that SPDX 2.3 has
// no field for, as the release's finished CycloneDX document states it:
// the producer's contact and, per component, its creator with a contact,
// its file, the file's kind, the deployable's URI and SHA-512, the source
// URI and which licences are stated. FromSPDX23 writes each in SPDX 3's
// own model, so the SPDX 3.0.1 document says what the CycloneDX one says.
type Facts struct {
	// Producer is the SBOM's creator (CycloneDX metadata.manufacturer).
	Producer Agent
	// Components are keyed by the cataloguer's package ID, the suffix of
	// an SPDX 2.3 package's SPDXID and the package-id of a CycloneDX
	// bom-ref.
	Components map[string]Component
}

// Agent is an organisation with its contact.
type Agent struct {
	Name, URL, Email string
	// Derived marks a contact found, not declared (the module path, the
	// distribution's os-release).
	Derived bool
}

func (a Agent) contact() bool { return a.URL != "" || a.Email != "" }

// Component is one component's BSI TR-03183-2 v2.1.0 fields.
type Component struct {
	Creator  Agent
	Filename string
	// Executable, Archive and Structured are the BSI CycloneDX taxonomy's
	// values ("executable"/"non-executable", "archive"/"no archive",
	// "structured"/"unstructured"), empty when not stated.
	Executable, Archive, Structured string
	// DeployableURI and DeployableSHA512 are the file the component is
	// delivered in as a registry serves it (an image layer).
	DeployableURI, DeployableSHA512 string
	SourceURI, SecurityTxt          string
	// Declared and Concluded say which licences the CycloneDX document
	// acknowledges: the original (declared) and the concluded one.
	Declared, Concluded bool
}

// bsiComment says on each distribution artifact what its purposes mean,
// as BSI TR-03183-2 v2.1.0 §8.2 (the SPDX 3.0.1 mapping) asks.
const bsiComment = "software_additionalPurpose field is used to indicate the properties of BSI TR-03183-2: executable, archive, and container (structured) or firmware (unstructured)"

// addBSIFields writes facts into the converted document. A component the
// facts name that the document lacks is an error: the formats would then
// disagree.
func addBSIFields(d *v3.Document, f Facts) error {
	var sbom *v3.SBOM
	for _, r := range d.RootElements {
		if b, ok := r.(*v3.SBOM); ok {
			sbom = b
		}
	}
	if sbom == nil {
		return fmt.Errorf("the converted document has no SBOM element")
	}
	if ci, ok := d.CreationInfo.(*v3.CreationInfo); ok && f.Producer.contact() {
		for _, a := range ci.CreatedBy {
			if o, ok := a.(*v3.Organization); ok && o.Name == f.Producer.Name {
				o.ExternalIdentifiers = addIdentifiers(o.ExternalIdentifiers, contactIdentifiers(f.Producer))
			}
		}
	}
	rels := licenceRelationships(d.Elements)
	seen := map[string]bool{}
	var added v3.ElementList
	for _, e := range d.Elements {
		p, ok := e.(*v3.Package)
		if !ok {
			continue
		}
		id := packageID(p.ID)
		c, ok := f.Components[id]
		if !ok {
			continue
		}
		seen[id] = true
		added = append(added, describe(p, c)...)
		added = append(added, mirrorLicences(p, rels[p], c)...)
	}
	var lost []string
	for id := range f.Components {
		if !seen[id] {
			lost = append(lost, id)
		}
	}
	if len(lost) > 0 {
		sort.Strings(lost)
		return fmt.Errorf("the CycloneDX document describes packages %s, which the SPDX 2.3 document does not list", strings.Join(lost, ", "))
	}
	d.Elements = append(d.Elements, added...)
	sbom.Elements = append(sbom.Elements, added...)
	return nil
}

// packageID is the cataloguer's ID at the end of an SPDX 2.3 package
// identifier (SPDXRef-Package-go-module-…-63885301b0606952).
func packageID(spdxID string) string {
	return spdxID[strings.LastIndex(spdxID, "-")+1:]
}

// describe writes one component's fields on p and returns the elements it
// made. The mapping is BSI TR-03183-2 v2.1.0 §8.2's for SPDX 3.0.1:
//   - component creator (§5.2.2): originatedBy an Organization with an
//     email or URL identifier;
//   - filename, executable/archive/structured properties, hash of the
//     deployable component and its URI (§5.2.2, §5.2.4): a software_File
//     the package hasDistributionArtifact (completeness complete), named
//     by the filename, its software_additionalPurpose "executable",
//     "archive", and "container" (structured) or "firmware"
//     (unstructured), a SHA-512 in verifiedUsing and the URI as a
//     binaryArtifact externalRef;
//   - source code URI (§5.2.4): a sourceArtifact externalRef;
//   - security.txt (§5.2.5): a securityOther externalRef.
//
// §8.2 hangs the source URI on a separate source artifact the package is
// generated from; SPDX 3's sourceArtifact reference on the package itself
// says the same with one element less.
func describe(p *v3.Package, c Component) v3.ElementList {
	var out v3.ElementList
	if c.Creator.Name != "" && c.Creator.contact() {
		o := &v3.Organization{Name: c.Creator.Name, ExternalIdentifiers: contactIdentifiers(c.Creator)}
		if c.Creator.Derived {
			o.Comment = "contact derived (from the module path or the distribution's os-release), not declared by the creator"
		}
		p.OriginatedBy = append(p.OriginatedBy, o)
		out = append(out, o)
	}
	if c.SourceURI != "" {
		p.ExternalRefs = append(p.ExternalRefs, &v3.ExternalRef{Type: v3.ExternalRefType_SourceArtifact, Locators: []string{c.SourceURI}})
	}
	if c.SecurityTxt != "" {
		p.ExternalRefs = append(p.ExternalRefs, &v3.ExternalRef{Type: v3.ExternalRefType_SecurityOther, Locators: []string{c.SecurityTxt},
			Comment: "security.txt (RFC 9116) of the component's creator"})
	}
	if c.Filename == "" {
		return out
	}
	f := &v3.File{Name: c.Filename, Kind: v3.FileKindType_File, AdditionalPurposes: filePurposes(c)}
	if len(f.AdditionalPurposes) > 0 || c.Executable != "" || c.Archive != "" {
		f.Comment = bsiComment
	}
	if c.DeployableSHA512 != "" {
		f.VerifiedUsing = v3.IntegrityMethodList{&v3.Hash{Algorithm: v3.HashAlgorithm_Sha512, Value: c.DeployableSHA512,
			Comment: "SHA-512 of the file the component is deployed in as the registry serves it (the binaryArtifact URL: the image layer that delivers it)"}}
	}
	if c.DeployableURI != "" {
		f.ExternalRefs = v3.ExternalRefList{&v3.ExternalRef{Type: v3.ExternalRefType_BinaryArtifact, Locators: []string{c.DeployableURI}}}
	}
	r := &v3.Relationship{Type: v3.RelationshipType_HasDistributionArtifact, From: p, To: v3.ElementList{f},
		Completeness: v3.RelationshipCompleteness_Complete}
	return append(out, f, r)
}

// filePurposes maps the BSI CycloneDX taxonomy's values to SPDX 3
// purposes (§8.2): "non-executable" and "no archive" are the absence of
// "executable" and "archive".
func filePurposes(c Component) []v3.SoftwarePurpose {
	var out []v3.SoftwarePurpose
	if c.Executable == "executable" {
		out = append(out, v3.SoftwarePurpose_Executable)
	}
	if c.Archive == "archive" {
		out = append(out, v3.SoftwarePurpose_Archive)
	}
	switch c.Structured {
	case "structured":
		out = append(out, v3.SoftwarePurpose_Container)
	case "unstructured":
		out = append(out, v3.SoftwarePurpose_Firmware)
	}
	return out
}

// contactIdentifiers are an agent's email address and URL as SPDX 3
// external identifiers (§8.2: email, else a URL).
func contactIdentifiers(a Agent) v3.ExternalIdentifierList {
	var out v3.ExternalIdentifierList
	if a.Email != "" {
		out = append(out, &v3.ExternalIdentifier{Type: v3.ExternalIdentifierType_Email, Identifier: a.Email})
	}
	if a.URL != "" {
		out = append(out, &v3.ExternalIdentifier{Type: v3.ExternalIdentifierType_UrlScheme, Identifier: a.URL})
	}
	return out
}

// addIdentifiers appends the identifiers have lacks (an SPDX 2.3 actor's
// "(email)" is one already).
func addIdentifiers(have, more v3.ExternalIdentifierList) v3.ExternalIdentifierList {
	for _, m := range more {
		if !slices.ContainsFunc(have, func(h v3.AnyExternalIdentifier) bool {
			return h.GetType() == m.GetType() && h.GetIdentifier() == m.GetIdentifier()
		}) {
			have = append(have, m)
		}
	}
	return have
}

// pkgLicences are a package's declared and concluded licence relationships.
type pkgLicences struct{ declared, concluded []*v3.Relationship }

func licenceRelationships(elems v3.ElementList) map[v3.AnyElement]*pkgLicences {
	out := map[v3.AnyElement]*pkgLicences{}
	for _, e := range elems {
		r, ok := e.(*v3.Relationship)
		if !ok || r.From == nil {
			continue
		}
		if out[r.From] == nil {
			out[r.From] = &pkgLicences{}
		}
		switch r.Type {
		case v3.RelationshipType_HasDeclaredLicense:
			out[r.From].declared = append(out[r.From].declared, r)
		case v3.RelationshipType_HasConcludedLicense:
			out[r.From].concluded = append(out[r.From].concluded, r)
		}
	}
	return out
}

// mirrorLicences keeps the original (declared) and concluded licences as
// the CycloneDX document acknowledges them (sbom's acknowledgeLicences):
// the release changes no component's licence, so where the SPDX 2.3
// document states one of the two and says NOASSERTION for the other (syft
// files a Go module's licence read from the module cache as concluded,
// an RPM's as declared), the stated licence is both. It returns the
// relationships it had to add.
func mirrorLicences(p *v3.Package, l *pkgLicences, c Component) v3.ElementList {
	if l == nil {
		return nil
	}
	var out v3.ElementList
	if c.Declared {
		out = append(out, fill(p, v3.RelationshipType_HasDeclaredLicense, l.declared, l.concluded)...)
	}
	if c.Concluded {
		out = append(out, fill(p, v3.RelationshipType_HasConcludedLicense, l.concluded, l.declared)...)
	}
	return out
}

// fill points the relationships of want that name no licence at the
// licence the first of from names, or adds one of type typ from p when
// there is none.
func fill(p *v3.Package, typ v3.RelationshipType, want, from []*v3.Relationship) v3.ElementList {
	var src v3.ElementList
	for _, r := range from {
		if stated(r.To) {
			src = r.To
			break
		}
	}
	if src == nil {
		return nil
	}
	if len(want) == 0 {
		return v3.ElementList{&v3.Relationship{Type: typ, From: p, To: slices.Clone(src)}}
	}
	for _, r := range want {
		if !stated(r.To) {
			r.To = slices.Clone(src)
		}
	}
	return nil
}

// stated reports a licence other than NOASSERTION and NONE.
func stated(to v3.ElementList) bool {
	for _, e := range to {
		if _, individual := e.(*v3.IndividualLicensingInfo); e != nil && !individual {
			return true
		}
	}
	return false
}

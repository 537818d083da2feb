package review

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Profile names a published set of SBOM minimum elements a review checks
// every SBOM against.
type Profile string

// The profiles, weakest first. ProfileBSI is the current version of BSI
// TR-03183-2 (v2.1.0); ProfileBSI11 is v1.1, for reviewers still held to it.
const (
	ProfileNTIA2021 Profile = "ntia-2021"
	ProfileCISA2025 Profile = "cisa-2025"
	ProfileBSI11    Profile = "bsi-tr-03183-2@v1.1"
	ProfileBSI      Profile = "bsi-tr-03183-2"
)

// DefaultProfile is the profile every format our releases publish is
// checked against. BSI TR-03183-2 v2.1.0, which our releases pass too, is
// not the default: it allows neither SPDX 2, so it checks only the
// CycloneDX and SPDX 3.0.1 documents, nor an SBOM without producer
// contacts, which SBOMs made elsewhere rarely carry.
const DefaultProfile = ProfileCISA2025

// Profiles returns the profiles --profile accepts, weakest first.
func Profiles() []Profile {
	return []Profile{ProfileNTIA2021, ProfileCISA2025, ProfileBSI11, ProfileBSI}
}

// ParseProfile reads a --profile value; empty is DefaultProfile.
func ParseProfile(s string) (Profile, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" {
		return DefaultProfile, nil
	}
	var names []string
	for _, p := range Profiles() {
		if string(p) == s {
			return p, nil
		}
		names = append(names, string(p))
	}
	return "", fmt.Errorf("--profile %q: want one of %s", s, strings.Join(names, ", "))
}

// Title is the profile's document as a reviewer knows it.
func (p Profile) Title() string {
	switch p {
	case ProfileNTIA2021:
		return "NTIA, The Minimum Elements for a Software Bill of Materials (2021)"
	case ProfileCISA2025:
		return "CISA, 2025 Minimum Elements for a Software Bill of Materials (public comment draft, August 2025)"
	case ProfileBSI11:
		return "BSI TR-03183-2, Software Bill of Materials, v1.1 (2023-11-28)"
	case ProfileBSI:
		return "BSI TR-03183-2, Software Bill of Materials, v2.1.0 (2025-08-20): checked on CycloneDX 1.6 or later and SPDX 3.0.1, the formats it allows (SPDX 2 documents are not checked)"
	}
	return string(p)
}

// field is one fact an SBOM carries or lacks. Profiles name the same fact
// differently ("Supplier Name", "Software Producer", "Component creator");
// the checker tests the fact once.
type field int

const (
	// Document level.
	fieldAuthor            field = iota // a person or organisation, not a tool, made the SBOM
	fieldAuthorContact                  // the SBOM author's email address or URL
	fieldTool                           // the tool that generated the SBOM
	fieldTimestamp                      // when the SBOM was made
	fieldContext                        // the lifecycle phase it was made in
	fieldSBOMURI                        // the SBOM's own URI
	fieldNoVulnerabilities              // the SBOM holds no vulnerability data
	// Component level.
	fieldSupplier        // who supplies (produces) the component
	fieldSupplierContact // the component creator's email address or URL
	fieldName
	fieldVersion
	fieldIdentifier   // PURL or CPE
	fieldHash         // a cryptographic hash with its algorithm
	fieldHashSHA512   // a SHA-512 of the executable component
	fieldLicence      // the licence the component is distributed under
	fieldRelationship // how the component relates to another
	fieldFilename     // the component's file name
	// BSI TR-03183-2 v2.1.0's component fields.
	fieldDeployableHash   // a SHA-512 of the file the component is deployed in
	fieldExecutable       // whether that file is executable
	fieldArchive          // whether it is an archive
	fieldStructured       // whether it is structured
	fieldSourceURI        // where the component's source is
	fieldDeployableURI    // where the deployable file is
	fieldOriginalLicence  // the licence its authors declare
	fieldConcludedLicence // the licence it is distributed under, concluded
)

// documentLevel says whether a field describes the SBOM or each component.
func (f field) documentLevel() bool { return f <= fieldNoVulnerabilities }

// requirement is one element one profile requires.
type requirement struct {
	profile Profile
	// element is the element's name in the profile's document.
	element string
	field   field
	// source is the document and the place in it the element comes from.
	source string
}

// requirements is the one table of what each profile requires, in the
// order each document lists its elements.
var requirements = []requirement{
	{ProfileNTIA2021, "Supplier Name", fieldSupplier, "NTIA Minimum Elements (2021), Data Fields"},
	{ProfileNTIA2021, "Component Name", fieldName, "NTIA Minimum Elements (2021), Data Fields"},
	{ProfileNTIA2021, "Version of the Component", fieldVersion, "NTIA Minimum Elements (2021), Data Fields"},
	{ProfileNTIA2021, "Other Unique Identifiers", fieldIdentifier, "NTIA Minimum Elements (2021), Data Fields"},
	{ProfileNTIA2021, "Dependency Relationship", fieldRelationship, "NTIA Minimum Elements (2021), Data Fields"},
	{ProfileNTIA2021, "Author of SBOM Data", fieldAuthor, "NTIA Minimum Elements (2021), Data Fields"},
	{ProfileNTIA2021, "Timestamp", fieldTimestamp, "NTIA Minimum Elements (2021), Data Fields"},

	{ProfileCISA2025, "SBOM Author", fieldAuthor, "CISA 2025 Minimum Elements (draft), Data Fields"},
	{ProfileCISA2025, "Software Producer", fieldSupplier, "CISA 2025 Minimum Elements (draft), Data Fields"},
	{ProfileCISA2025, "Component Name", fieldName, "CISA 2025 Minimum Elements (draft), Data Fields"},
	{ProfileCISA2025, "Component Version", fieldVersion, "CISA 2025 Minimum Elements (draft), Data Fields"},
	{ProfileCISA2025, "Software Identifiers", fieldIdentifier, "CISA 2025 Minimum Elements (draft), Data Fields"},
	{ProfileCISA2025, "Component Hash", fieldHash, "CISA 2025 Minimum Elements (draft), Data Fields"},
	{ProfileCISA2025, "License", fieldLicence, "CISA 2025 Minimum Elements (draft), Data Fields"},
	{ProfileCISA2025, "Dependency Relationship", fieldRelationship, "CISA 2025 Minimum Elements (draft), Data Fields"},
	{ProfileCISA2025, "Tool Name", fieldTool, "CISA 2025 Minimum Elements (draft), Data Fields"},
	{ProfileCISA2025, "Timestamp", fieldTimestamp, "CISA 2025 Minimum Elements (draft), Data Fields"},
	{ProfileCISA2025, "Generation Context", fieldContext, "CISA 2025 Minimum Elements (draft), Data Fields"},

	{ProfileBSI11, "Creator of the SBOM", fieldAuthorContact, "BSI TR-03183-2 v1.1 §5.2.1 (SBOM)"},
	{ProfileBSI11, "Timestamp", fieldTimestamp, "BSI TR-03183-2 v1.1 §5.2.1 (SBOM)"},
	{ProfileBSI11, "Component creator", fieldSupplierContact, "BSI TR-03183-2 v1.1 §5.2.2 (component)"},
	{ProfileBSI11, "Component name", fieldName, "BSI TR-03183-2 v1.1 §5.2.2 (component)"},
	{ProfileBSI11, "Component version", fieldVersion, "BSI TR-03183-2 v1.1 §5.2.2 (component)"},
	{ProfileBSI11, "Filename of the component", fieldFilename, "BSI TR-03183-2 v1.1 §5.2.2 (component)"},
	{ProfileBSI11, "Dependencies on other components", fieldRelationship, "BSI TR-03183-2 v1.1 §5.2.2 (component)"},
	{ProfileBSI11, "Licence", fieldLicence, "BSI TR-03183-2 v1.1 §5.2.2 (component)"},
	{ProfileBSI11, "Hash value of the executable component", fieldHashSHA512, "BSI TR-03183-2 v1.1 §5.2.2 (component)"},

	{ProfileBSI, "Creator of the SBOM", fieldAuthorContact, "BSI TR-03183-2 v2.1.0 §5.2.1 (SBOM)"},
	{ProfileBSI, "Timestamp", fieldTimestamp, "BSI TR-03183-2 v2.1.0 §5.2.1 (SBOM)"},
	{ProfileBSI, "SBOM-URI", fieldSBOMURI, "BSI TR-03183-2 v2.1.0 §5.2.1 (SBOM)"},
	{ProfileBSI, "No vulnerability information", fieldNoVulnerabilities, "BSI TR-03183-2 v2.1.0 §3.1 (an SBOM holds no vulnerability data)"},
	{ProfileBSI, "Component creator", fieldSupplierContact, "BSI TR-03183-2 v2.1.0 §5.2.2 (component)"},
	{ProfileBSI, "Component name", fieldName, "BSI TR-03183-2 v2.1.0 §5.2.2 (component)"},
	{ProfileBSI, "Component version", fieldVersion, "BSI TR-03183-2 v2.1.0 §5.2.2 (component)"},
	{ProfileBSI, "Filename of the component", fieldFilename, "BSI TR-03183-2 v2.1.0 §5.2.2 (component)"},
	{ProfileBSI, "Dependencies on other components", fieldRelationship, "BSI TR-03183-2 v2.1.0 §5.2.2 (component)"},
	{ProfileBSI, "Distribution licences", fieldConcludedLicence, "BSI TR-03183-2 v2.1.0 §5.2.2 (component; concluded)"},
	{ProfileBSI, "Hash value of the deployable component", fieldDeployableHash, "BSI TR-03183-2 v2.1.0 §5.2.2 (component; SHA-512)"},
	{ProfileBSI, "Executable property", fieldExecutable, "BSI TR-03183-2 v2.1.0 §5.2.2 (component)"},
	{ProfileBSI, "Archive property", fieldArchive, "BSI TR-03183-2 v2.1.0 §5.2.2 (component)"},
	{ProfileBSI, "Structured property", fieldStructured, "BSI TR-03183-2 v2.1.0 §5.2.2 (component)"},
	{ProfileBSI, "Source code URI", fieldSourceURI, "BSI TR-03183-2 v2.1.0 §5.2.2 (component)"},
	{ProfileBSI, "URI of the deployable form of the component", fieldDeployableURI, "BSI TR-03183-2 v2.1.0 §5.2.2 (component)"},
	{ProfileBSI, "Other unique identifiers", fieldIdentifier, "BSI TR-03183-2 v2.1.0 §5.2.2 (component)"},
	{ProfileBSI, "Original licences", fieldOriginalLicence, "BSI TR-03183-2 v2.1.0 §5.2.2 (component; declared)"},
}

// Check lists the elements of profile p the document lacks, naming the
// components that lack a component element. A field the SBOM does not
// carry is missing even when nobody could know it: the profile fails, and
// the detail says which components.
func (d *Document) Check(p Profile) []MissingElement {
	var out []MissingElement
	for _, r := range requirements {
		if r.profile != p {
			continue
		}
		if r.field.documentLevel() {
			if !d.facts[r.field] {
				out = append(out, MissingElement{Element: r.element, Source: r.source, Detail: documentDetail(r.field)})
			}
			continue
		}
		if r.field == fieldName && len(d.Components) == 0 {
			out = append(out, MissingElement{Element: r.element, Source: r.source, Detail: "the SBOM lists no components"})
			continue
		}
		var names []string
		applies := 0
		for i, c := range d.Components {
			if !appliesTo(p, r.field, c) {
				continue
			}
			applies++
			if !has(r.field, c, d.evidence[i]) {
				names = append(names, c.label())
			}
		}
		if len(names) == 0 {
			continue
		}
		sort.Strings(names)
		names = slices.Compact(names)
		ex := names
		if len(ex) > 5 {
			ex = append(ex[:5:5], "…")
		}
		out = append(out, MissingElement{Element: r.element, Source: r.source, Components: names,
			Detail: fmt.Sprintf("%d of %d components have no %s: %s", len(names), applies, componentNoun(r.field), strings.Join(ex, ", "))})
	}
	return out
}

// appliesTo says whether a component element of profile p applies to c.
// BSI TR-03183-2 v1.1 omits the hash and file name of components assembled
// so that they cannot be told apart any more (§5.2.2): a Go module compiled
// into a binary has neither; the binary has both. v2.1.0 asks every
// component for the file it is deployed in, which for a Go module is the
// binary.
func appliesTo(p Profile, f field, c Component) bool {
	if p == ProfileBSI11 && (f == fieldHashSHA512 || f == fieldFilename) {
		return !strings.HasPrefix(c.PURL, "pkg:golang/")
	}
	return true
}

// has says whether c, with evidence e, carries the component field f.
func has(f field, c Component, e evidence) bool {
	switch f {
	case fieldSupplier:
		return c.Supplier != ""
	case fieldSupplierContact:
		return e.creatorContact
	case fieldName:
		return strings.TrimSpace(c.Name) != ""
	case fieldVersion:
		return strings.TrimSpace(c.Version) != ""
	case fieldIdentifier:
		return c.PURL != "" || c.CPE != ""
	case fieldHash:
		return len(e.hashes) > 0
	case fieldHashSHA512:
		for _, h := range e.hashes {
			if h == "SHA-512" {
				return true
			}
		}
		return false
	case fieldLicence:
		return c.LicenceDeclared != ""
	case fieldRelationship:
		return e.related
	case fieldFilename:
		return e.filename
	case fieldDeployableHash:
		return e.deployableSHA512
	case fieldExecutable, fieldArchive, fieldStructured:
		return e.fileKind[f]
	case fieldSourceURI:
		return e.sourceURI
	case fieldDeployableURI:
		return e.deployableURI
	case fieldOriginalLicence:
		return e.licenceOriginal
	case fieldConcludedLicence:
		return e.licenceConcluded
	}
	return false
}

// label names a component in a detail: name and version tell two
// versions of one module apart.
func (c Component) label() string {
	if c.Version == "" {
		return c.Name
	}
	return c.Name + "@" + c.Version
}

func componentNoun(f field) string {
	switch f {
	case fieldSupplier:
		return "supplier"
	case fieldSupplierContact:
		return "creator's email address or URL"
	case fieldName:
		return "name"
	case fieldVersion:
		return "version"
	case fieldIdentifier:
		return "PURL or CPE"
	case fieldHash:
		return "hash"
	case fieldHashSHA512:
		return "SHA-512 hash"
	case fieldLicence:
		return "licence"
	case fieldRelationship:
		return "relationship to another component"
	case fieldFilename:
		return "file name"
	case fieldDeployableHash:
		return "SHA-512 of the file it is deployed in"
	case fieldExecutable:
		return "executable property (CycloneDX " + PropertyExecutableName + ": executable or non-executable; SPDX 3: the purposes of its distribution artifact)"
	case fieldArchive:
		return "archive property (CycloneDX " + PropertyArchiveName + ": archive or no archive; SPDX 3: the purposes of its distribution artifact)"
	case fieldStructured:
		return "structured property (CycloneDX " + PropertyStructuredName + ": structured or unstructured; SPDX 3: container or firmware among its distribution artifact's purposes)"
	case fieldSourceURI:
		return "source code URI"
	case fieldDeployableURI:
		return "URI of its deployable form"
	case fieldOriginalLicence:
		return "original (declared) licence"
	case fieldConcludedLicence:
		return "concluded (distribution) licence"
	}
	return "value"
}

func documentDetail(f field) string {
	switch f {
	case fieldAuthor:
		return "no person or organisation is named as the SBOM's author (a tool alone is not an author)"
	case fieldAuthorContact:
		return "no email address or URL of the SBOM's author"
	case fieldTool:
		return "no tool is named as having generated the SBOM"
	case fieldTimestamp:
		return "no creation time"
	case fieldSBOMURI:
		return "no URI of the SBOM itself (CycloneDX serialNumber, SPDX document namespace)"
	case fieldNoVulnerabilities:
		return "the SBOM carries vulnerability data; VEX and scan results belong in documents of their own"
	case fieldContext:
		return "no generation context (the lifecycle phase the SBOM was made in: CycloneDX metadata.lifecycles, SPDX creationInfo comment)"
	}
	return "missing"
}

package review

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	v3 "github.com/spdx/tools-golang/spdx/v3/v3_0"
)

// MediaTypeSPDX3 is the media type of SPDX 3 JSON-LD documents (IANA
// application/spdx3+json), the artifact type of a release's SPDX 3.0.1 SBOM.
const MediaTypeSPDX3 = "application/spdx3+json"

// readSPDX3 runs tools-golang's SPDX 3 JSON-LD reader, recovering from a
// panic on a malformed graph as readSPDX does.
func readSPDX3(data []byte) (doc *v3.Document, err error) {
	defer func() {
		if p := recover(); p != nil {
			doc, err = nil, fmt.Errorf("malformed document (the SPDX 3 reader failed: %v)", p)
		}
	}()
	doc = &v3.Document{}
	if err := doc.FromJSON(bytes.NewReader(data)); err != nil {
		return nil, err
	}
	return doc, nil
}

// fromSPDX3 is fromSPDX for SPDX 3: the same facts from the same places
// moved to SPDX 3's model (relationships for licences, agents for
// suppliers, integrity methods for hashes), so the three formats a release
// publishes are read alike.
func fromSPDX3(doc *v3.Document, what string) (*Document, error) {
	ci, _ := doc.CreationInfo.(*v3.CreationInfo)
	if ci == nil || ci.SpecVersion == "" {
		return nil, fmt.Errorf("SPDX 3 SBOM %s has no creation information with a specVersion", what)
	}
	d := &Document{Format: "SPDX-" + ci.SpecVersion, facts: map[field]bool{}}
	described := map[v3.AnyElement]bool{}
	for _, root := range doc.RootElements {
		if b, ok := root.(*v3.SBOM); ok {
			for _, e := range b.RootElements {
				described[e] = true
			}
			d.facts[fieldContext] = len(b.SbomTypes) > 0
		}
	}
	rels := spdx3Relations(doc.Elements)
	for _, e := range doc.Elements {
		p, ok := e.(*v3.Package)
		if !ok || p == nil || described[p] {
			continue
		}
		c, ev := spdx3Component(p, rels)
		d.Components = append(d.Components, c)
		d.evidence = append(d.evidence, ev)
	}
	d.facts[fieldTimestamp] = !ci.Created.IsZero()
	d.facts[fieldContext] = d.facts[fieldContext] || strings.TrimSpace(ci.Comment) != ""
	for _, a := range ci.CreatedBy {
		switch a.(type) {
		case *v3.Organization, *v3.Person:
			d.facts[fieldAuthor] = true
			d.facts[fieldAuthorContact] = d.facts[fieldAuthorContact] || agentContact(a)
		}
	}
	d.facts[fieldTool] = len(ci.CreatedUsing) > 0
	d.facts[fieldSBOMURI] = strings.Contains(doc.ID, "://")
	d.facts[fieldNoVulnerabilities] = !spdx3Vulnerabilities(doc.Elements)
	spdx3DocumentFacts(ci, doc.Elements, d)
	return d, nil
}

// spdx3Links is what relationships say of one package.
type spdx3Links struct {
	declared, concluded []v3.AnyLicenseInfo
	related             bool
	// artifacts are the files it hasDistributionArtifact.
	artifacts []v3.AnyFile
}

func spdx3Relations(elems v3.ElementList) map[v3.AnyElement]*spdx3Links {
	out := map[v3.AnyElement]*spdx3Links{}
	at := func(e v3.AnyElement) *spdx3Links {
		if out[e] == nil {
			out[e] = &spdx3Links{}
		}
		return out[e]
	}
	for _, e := range elems {
		r, ok := e.(v3.AnyRelationship)
		if !ok || r.GetFrom() == nil {
			continue
		}
		from := r.GetFrom()
		switch r.GetType() {
		case v3.RelationshipType_HasDeclaredLicense:
			at(from).declared = append(at(from).declared, r.GetTo().LicenseInfos()...)
		case v3.RelationshipType_HasConcludedLicense:
			at(from).concluded = append(at(from).concluded, r.GetTo().LicenseInfos()...)
		case v3.RelationshipType_HasDistributionArtifact:
			at(from).artifacts = append(at(from).artifacts, r.GetTo().Files()...)
		case v3.RelationshipType_Contains, v3.RelationshipType_DependsOn, v3.RelationshipType_HasDynamicLink, v3.RelationshipType_HasStaticLink:
			for _, to := range r.GetTo() {
				if to != nil && to != from {
					at(from).related, at(to).related = true, true
				}
			}
		}
	}
	return out
}

// spdx3Component reads one package as fromSPDX reads an SPDX 2.3 one.
func spdx3Component(p *v3.Package, rels map[v3.AnyElement]*spdx3Links) (Component, evidence) {
	l := rels[p]
	if l == nil {
		l = &spdx3Links{}
	}
	c := Component{Name: p.Name, Version: p.Version, PURL: string(p.PackageURL)}
	for _, id := range p.ExternalIdentifiers {
		t := id.GetType()
		if (t == v3.ExternalIdentifierType_Cpe23 || t == v3.ExternalIdentifierType_Cpe22) && c.CPE == "" {
			c.CPE = id.GetIdentifier()
		}
	}
	c.Source = sourceOf(c.PURL, p.SourceInfo)
	e := evidence{related: l.related}
	spdx3Evidence(p, l, &e)
	if p.SuppliedBy != nil {
		if name := strings.TrimSpace(p.SuppliedBy.GetName()); name != "" && name != noAssertion {
			c.Supplier = strings.TrimPrefix(agentKind(p.SuppliedBy)+": "+name, ": ")
		}
		e.creatorContact = agentContact(p.SuppliedBy)
	}
	for _, a := range p.OriginatedBy {
		e.creatorContact = e.creatorContact || agentContact(a)
	}
	for _, m := range p.VerifiedUsing {
		if h, ok := m.(*v3.Hash); ok && strings.TrimSpace(h.Value) != "" {
			alg := spdx3Algorithm(h.Algorithm.GetID())
			e.hashes = append(e.hashes, alg)
			e.deployableSHA512 = e.deployableSHA512 || alg == "SHA-512"
		}
	}
	declared, concluded := licenceExpression(l.declared), licenceExpression(l.concluded)
	e.licenceOriginal, e.licenceConcluded = declared != "", concluded != ""
	c.LicenceDeclared = declared
	if c.LicenceDeclared == "" {
		c.LicenceDeclared = concluded
	}
	return c, e
}

// agentKind names an agent as SPDX 2 actors are named.
func agentKind(a v3.AnyAgent) string {
	switch a.(type) {
	case *v3.Organization:
		return "Organization"
	case *v3.Person:
		return "Person"
	case *v3.SoftwareAgent:
		return "Tool"
	}
	return ""
}

// agentContact reports an agent with an email address or a URL among its
// external identifiers or references.
func agentContact(a v3.AnyAgent) bool {
	for _, id := range a.GetExternalIdentifiers() {
		if id.GetType() == v3.ExternalIdentifierType_Email && strings.Contains(id.GetIdentifier(), "@") ||
			id.GetType() == v3.ExternalIdentifierType_UrlScheme && strings.TrimSpace(id.GetIdentifier()) != "" {
			return true
		}
	}
	for _, r := range a.GetExternalRefs() {
		if slices.ContainsFunc(r.GetLocators(), func(s string) bool { return strings.TrimSpace(s) != "" }) {
			return true
		}
	}
	return false
}

// spdx3Algorithm names an SPDX 3 hash algorithm (an IRI ending in "sha256")
// as CycloneDX does ("SHA-256").
func spdx3Algorithm(iri string) string {
	return spdxAlgorithm(strings.ToUpper(path.Base(iri)))
}

// spdx3Vulnerabilities reports security-profile elements: SPDX 3's
// vulnerabilities and their assessments.
func spdx3Vulnerabilities(elems v3.ElementList) bool {
	for _, e := range elems {
		switch e.(type) {
		case v3.AnyVulnerability, v3.AnyVulnAssessmentRelationship:
			return true
		}
	}
	return false
}

// licenceExpression writes SPDX 3's licence objects back as one SPDX
// licence expression, NOASSERTION and NONE as no licence, several
// licences joined with AND as fromCycloneDX joins them.
func licenceExpression(ls []v3.AnyLicenseInfo) string {
	var parts []string
	for _, l := range ls {
		if s := licenceText3(l, false); s != "" && s != noAssertion && s != "NONE" {
			parts = append(parts, s)
		}
	}
	if len(parts) > 1 {
		for i, p := range parts {
			if strings.Contains(p, " ") {
				parts[i] = "(" + p + ")"
			}
		}
	}
	return strings.Join(parts, " AND ")
}

func licenceText3(l v3.AnyLicenseInfo, nested bool) string {
	join := func(members []v3.AnyLicenseInfo, op string) string {
		var parts []string
		for _, m := range members {
			parts = append(parts, licenceText3(m, true))
		}
		s := strings.Join(parts, " "+op+" ")
		if nested && len(parts) > 1 {
			s = "(" + s + ")"
		}
		return s
	}
	switch l := l.(type) {
	case nil:
		return ""
	case *v3.ConjunctiveLicenseSet:
		return join(l.Members, "AND")
	case *v3.DisjunctiveLicenseSet:
		return join(l.Members, "OR")
	case *v3.OrLaterOperator:
		return licenceText3(l.SubjectLicense, true) + "+"
	case *v3.WithAdditionOperator:
		s := licenceText3(l.SubjectExtendableLicense, true) + " WITH " + additionText(l.SubjectAddition)
		if nested {
			s = "(" + s + ")"
		}
		return s
	case *v3.ListedLicense:
		if l.Name != "" {
			return l.Name
		}
		return path.Base(l.ID)
	case *v3.IndividualLicensingInfo:
		if strings.HasSuffix(l.ID, "NoneLicense") {
			return "NONE"
		}
		return noAssertion
	}
	return localID(l.GetID())
}

func additionText(a v3.AnyLicenseAddition) string {
	switch a := a.(type) {
	case *v3.ListedLicenseException:
		if a.AdditionText != "" {
			return a.AdditionText
		}
		return path.Base(a.ID)
	case nil:
		return ""
	}
	return localID(a.GetID())
}

// localID is an identifier without the document's namespace
// ("https://…#LicenseRef-x" is "LicenseRef-x").
func localID(id string) string {
	if i := strings.LastIndexAny(id, "#:/"); i >= 0 {
		return id[i+1:]
	}
	return id
}

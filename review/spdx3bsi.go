package review

import (
	"strings"

	v3 "github.com/spdx/tools-golang/spdx/v3/v3_0"
)

// spdx3Evidence reads what BSI TR-03183-2 v2.1.0 asks of an SPDX 3.0.1
// package beyond what spdx3Component reads, by the TR's SPDX 3.0.1
// mapping (§8.2), as cdxEvidence reads it from CycloneDX:
//   - filename, hash and URI of the deployable component, and its
//     executable, archive and structured properties: a software_File the
//     package hasDistributionArtifact, by its name, a SHA-512 in its
//     verifiedUsing (or the package's own, as CycloneDX's component hash
//     counts), a binaryArtifact reference, and its purposes: "executable",
//     "archive", and "container" (structured) or "firmware"
//     (unstructured). A file whose purposes are stated (or that carries
//     §8.2's comment saying they are BSI's properties) and leave out
//     "executable" is non-executable, and likewise for "archive"; a file
//     with neither says nothing of either;
//   - source code URI: a sourceArtifact or vcs reference of the package;
//   - original and concluded licences: hasDeclaredLicense and
//     hasConcludedLicense (read by spdx3Component).
func spdx3Evidence(p *v3.Package, l *spdx3Links, e *evidence) {
	e.fileKind = map[field]bool{}
	e.deployableSHA512 = hasSHA512(p.VerifiedUsing)
	for _, f := range l.artifacts {
		e.filename = e.filename || strings.TrimSpace(f.GetName()) != ""
		e.deployableSHA512 = e.deployableSHA512 || hasSHA512(f.GetVerifiedUsing())
		e.deployableURI = e.deployableURI || hasRef(f.GetExternalRefs(), v3.ExternalRefType_BinaryArtifact)
		file, _ := f.(*v3.File)
		if file == nil {
			continue
		}
		purposes := append([]v3.SoftwarePurpose{file.PrimaryPurpose}, file.AdditionalPurposes...)
		// §8.2's comment says the purposes are BSI's properties, so a
		// non-executable file that is no archive and states no structure
		// still says both.
		stated := strings.Contains(file.Comment, "BSI TR-03183-2")
		for _, pp := range purposes {
			switch pp {
			case v3.SoftwarePurpose{}:
				continue
			case v3.SoftwarePurpose_Container, v3.SoftwarePurpose_Firmware:
				e.fileKind[fieldStructured] = true
			}
			stated = true
		}
		e.fileKind[fieldExecutable] = e.fileKind[fieldExecutable] || stated
		e.fileKind[fieldArchive] = e.fileKind[fieldArchive] || stated
	}
	e.deployableURI = e.deployableURI || hasRef(p.ExternalRefs, v3.ExternalRefType_BinaryArtifact)
	e.sourceURI = hasRef(p.ExternalRefs, v3.ExternalRefType_SourceArtifact) || hasRef(p.ExternalRefs, v3.ExternalRefType_Vcs)
}

func hasSHA512(ms v3.IntegrityMethodList) bool {
	for _, m := range ms {
		if h, ok := m.(*v3.Hash); ok && h.Algorithm == v3.HashAlgorithm_Sha512 && strings.TrimSpace(h.Value) != "" {
			return true
		}
	}
	return false
}

// hasRef reports an external reference of type t with a locator.
func hasRef(refs v3.ExternalRefList, t v3.ExternalRefType) bool {
	for _, r := range refs {
		if r.GetType() != t {
			continue
		}
		for _, l := range r.GetLocators() {
			if strings.TrimSpace(l) != "" {
				return true
			}
		}
	}
	return false
}

// spdx3DocumentFacts reads the producer's contact (the SBOM creator's URL,
// else its email address, as contactOf reads CycloneDX's manufacturer) and
// the security.txt a package names (a securityOther reference).
func spdx3DocumentFacts(ci *v3.CreationInfo, elems v3.ElementList, d *Document) {
	for _, a := range ci.CreatedBy {
		if d.securityContact = agentContactValue(a); d.securityContact != "" {
			break
		}
	}
	for _, e := range elems {
		p, ok := e.(*v3.Package)
		if !ok || d.securityTxt != "" {
			continue
		}
		for _, r := range p.ExternalRefs {
			if r.GetType() == v3.ExternalRefType_SecurityOther && len(r.GetLocators()) > 0 {
				d.securityTxt = r.GetLocators()[0]
				break
			}
		}
	}
}

// agentContactValue is an organisation's or person's URL identifier, else
// its email address.
func agentContactValue(a v3.AnyAgent) string {
	switch a.(type) {
	case *v3.Organization, *v3.Person:
	default:
		return ""
	}
	var email string
	for _, id := range a.GetExternalIdentifiers() {
		v := strings.TrimSpace(id.GetIdentifier())
		switch {
		case id.GetType() == v3.ExternalIdentifierType_UrlScheme && v != "":
			return v
		case id.GetType() == v3.ExternalIdentifierType_Email && strings.Contains(v, "@") && email == "":
			email = v
		}
	}
	return email
}

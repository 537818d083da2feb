package review

import "testing"

// The SPDX 3 reader takes JSON-LD from outside (a release's SBOMs): no
// input may panic or hang it.
func FuzzParseSPDX3(f *testing.F) {
	f.Add([]byte(`{"@context":"https://spdx.org/rdf/3.0.1/spdx-context.jsonld","@graph":[` +
		`{"type":"CreationInfo","@id":"_:ci","specVersion":"3.0.1","created":"2026-11-30T12:00:00Z","createdBy":["urn:a"]},` +
		`{"type":"Organization","spdxId":"urn:a","creationInfo":"_:ci","name":"x"},` +
		`{"type":"software_Package","spdxId":"urn:p","creationInfo":"_:ci","name":"a","software_packageVersion":"1","software_packageUrl":"pkg:golang/a@1","suppliedBy":"urn:a"},` +
		`{"type":"expandedlicensing_ListedLicense","spdxId":"urn:l","creationInfo":"_:ci","name":"MIT","simplelicensing_licenseText":"NOASSERTION"},` +
		`{"type":"Relationship","spdxId":"urn:r","creationInfo":"_:ci","from":"urn:p","to":["urn:l"],"relationshipType":"hasDeclaredLicense"},` +
		`{"type":"software_Sbom","spdxId":"urn:s","creationInfo":"_:ci","rootElement":["urn:p"],"element":["urn:p"]},` +
		`{"type":"SpdxDocument","spdxId":"urn:d","creationInfo":"_:ci","rootElement":["urn:s"]}]}`))
	// BSI TR-03183-2 v2.1.0's fields as the release writes them: a
	// distribution artifact with its purposes, SHA-512 and URI, a creator
	// with a contact, a source reference.
	f.Add([]byte(`{"@context":"https://spdx.org/rdf/3.0.1/spdx-context.jsonld","@graph":[` +
		`{"type":"CreationInfo","@id":"_:ci","specVersion":"3.0.1","created":"2026-11-30T12:00:00Z","createdBy":["urn:a"]},` +
		`{"type":"Organization","spdxId":"urn:a","creationInfo":"_:ci","name":"x","externalIdentifier":[{"type":"ExternalIdentifier","externalIdentifierType":"urlScheme","identifier":"https://x.example"}]},` +
		`{"type":"software_Package","spdxId":"urn:p","creationInfo":"_:ci","name":"a","software_packageVersion":"1","originatedBy":["urn:a"],` +
		`"externalRef":[{"type":"ExternalRef","externalRefType":"sourceArtifact","locator":["https://src.example/a"]}]},` +
		`{"type":"software_File","spdxId":"urn:f","creationInfo":"_:ci","name":"a.bin","software_additionalPurpose":["executable","container"],` +
		`"verifiedUsing":[{"type":"Hash","algorithm":"sha512","hashValue":"11"}],"externalRef":[{"type":"ExternalRef","externalRefType":"binaryArtifact","locator":["https://r.example/b"]}]},` +
		`{"type":"Relationship","spdxId":"urn:r","creationInfo":"_:ci","from":"urn:p","to":["urn:f"],"relationshipType":"hasDistributionArtifact","completeness":"complete"},` +
		`{"type":"software_Sbom","spdxId":"urn:s","creationInfo":"_:ci","rootElement":["urn:p"],"element":["urn:p","urn:f","urn:r"]},` +
		`{"type":"SpdxDocument","spdxId":"urn:d","creationInfo":"_:ci","rootElement":["urn:s"]}]}`))
	f.Add([]byte(`{"@context":"https://spdx.org/rdf/3.0.1/spdx-context.jsonld","@graph":[{"type":"SpdxDocument"}]}`))
	f.Add([]byte(`{"@graph":[null]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseSBOM(MediaTypeSPDX3, data, "fuzz")
		if err != nil {
			return
		}
		for _, pr := range Profiles() {
			for _, m := range d.Check(pr) {
				if m.Element == "" || m.Detail == "" {
					t.Fatalf("%s: a missing element without name or detail: %+v", pr, m)
				}
			}
		}
	})
}

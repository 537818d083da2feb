package spdx3

import (
	"encoding/json"
	"strings"
	"testing"
)

// syft files a Go module's licence read from the module cache as
// concluded and leaves the declared one NOASSERTION.
const goModule23 = `{"spdxVersion":"SPDX-2.3","SPDXID":"SPDXRef-DOCUMENT","name":"app","dataLicense":"CC0-1.0",
 "documentNamespace":"https://example.com/app","creationInfo":{"created":"2026-11-30T12:00:00Z","creators":["Organization: Example project"]},
 "packages":[{"name":"a","SPDXID":"SPDXRef-Package-go-module-a-9b0d215daee3bf42","versionInfo":"1","downloadLocation":"NOASSERTION",
  "licenseDeclared":"NOASSERTION","licenseConcluded":"MIT"}],
 "relationships":[{"spdxElementId":"SPDXRef-DOCUMENT","relatedSpdxElement":"SPDXRef-Package-go-module-a-9b0d215daee3bf42","relationshipType":"DESCRIBES"}]}`

// The facts name the package by the cataloguer's ID; what they say is
// written in SPDX 3's model, and the licence the CycloneDX document
// acknowledges as declared is the declared one here too.
func TestBSIFactsAreWrittenInSPDX3sModel(t *testing.T) {
	doc, err := FromSPDX23([]byte(goModule23), Facts{Producer: Agent{Name: "Example project", Email: "sbom@example.com"},
		Components: map[string]Component{"9b0d215daee3bf42": {Creator: Agent{Name: "a", URL: "https://example.com/a"}, Filename: "app",
			Executable: "executable", Archive: "no archive", Structured: "unstructured", DeployableURI: "https://r.example/blob", DeployableSHA512: "11",
			SourceURI: "https://src.example/a", Declared: true, Concluded: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(doc); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Graph []map[string]any `json:"@graph"`
	}
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	byID := map[string]map[string]any{}
	var found []string
	for _, n := range m.Graph {
		if id, ok := n["spdxId"].(string); ok {
			byID[id] = n
		}
	}
	for _, n := range m.Graph {
		switch {
		case n["relationshipType"] == "hasDeclaredLicense" || n["relationshipType"] == "hasConcludedLicense":
			to := byID[n["to"].([]any)[0].(string)]
			found = append(found, n["relationshipType"].(string)+"="+to["name"].(string))
		case n["relationshipType"] == "hasDistributionArtifact" && n["completeness"] == "complete":
			f := byID[n["to"].([]any)[0].(string)]
			b, _ := json.Marshal(f)
			found = append(found, "file="+f["name"].(string))
			for _, want := range []string{`"software_additionalPurpose":["executable","firmware"]`, `"algorithm":"sha512"`, `"externalRefType":"binaryArtifact"`} {
				if !strings.Contains(string(b), want) {
					t.Errorf("distribution artifact %s lacks %s", b, want)
				}
			}
		case n["type"] == "software_Package":
			b, _ := json.Marshal(n)
			if !strings.Contains(string(b), `"externalRefType":"sourceArtifact"`) || n["originatedBy"] == nil {
				t.Errorf("package %s, want its source reference and creator", b)
			}
		case n["type"] == "Organization" && n["name"] == "Example project":
			if b, _ := json.Marshal(n); !strings.Contains(string(b), `"externalIdentifierType":"email","identifier":"sbom@example.com"`) {
				t.Errorf("the SBOM's creator %s, want its email address", b)
			}
		}
	}
	got := strings.Join(found, " ")
	for _, want := range []string{"hasDeclaredLicense=MIT", "hasConcludedLicense=MIT", "file=app"} {
		if !strings.Contains(got, want) {
			t.Errorf("found %q, want %s", got, want)
		}
	}
}

// Facts about a package the SPDX 2.3 document does not list would make
// the formats disagree: refused.
func TestBSIFactsAboutAPackageSPDX23LacksAreRefused(t *testing.T) {
	_, err := FromSPDX23([]byte(goModule23), Facts{Components: map[string]Component{"0000000000000000": {Filename: "x"}}})
	if err == nil || !strings.Contains(err.Error(), "0000000000000000") {
		t.Errorf("err %v, want the package named", err)
	}
}

// A deployed file is identified by its name, purposes and SHA-512, not by
// the registry that serves it: two builds of one commit published to two
// registries differ only in that registry's host (publish/local's
// reproducibility test reads them so).
func TestADeployedFilesIdentifierDoesNotNameItsRegistry(t *testing.T) {
	build := func(host string) string {
		doc, err := FromSPDX23([]byte(goModule23), Facts{Components: map[string]Component{"9b0d215daee3bf42": {Filename: "app",
			Executable: "executable", DeployableURI: "https://" + host + "/v2/app/blobs/sha256:aa", DeployableSHA512: "11"}}})
		if err != nil {
			t.Fatal(err)
		}
		return string(doc)
	}
	a, b := build("127.0.0.1:5001"), build("127.0.0.1:5002")
	if strings.ReplaceAll(a, "127.0.0.1:5001", "127.0.0.1:5002") != b {
		t.Errorf("the documents differ beyond the registry's host:\n%s\n%s", a, b)
	}
}

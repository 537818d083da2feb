package review

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/sbom/spdx3"
)

// completeBSIFacts are completeBSI's fields (the CycloneDX document with
// every BSI TR-03183-2 v2.1.0 field) for completeSPDX's packages a and b,
// as the release pipeline hands them to the SPDX 3.0.1 conversion.
var completeBSIFacts = spdx3.Facts{
	Producer: spdx3.Agent{Name: "Example project", URL: "https://example.com/security"},
	Components: map[string]spdx3.Component{
		"a": {Creator: spdx3.Agent{Name: "example.com", URL: "https://example.com/a", Derived: true}, Filename: "app",
			Executable: "executable", Archive: "no archive", Structured: "structured",
			DeployableURI: "https://registry.example/v2/app/blobs/sha256:11", DeployableSHA512: "11",
			SourceURI: "https://proxy.golang.org/example.com/a/@v/1.zip", Declared: true, Concluded: true},
		"b": {Creator: spdx3.Agent{Name: "Example", Email: "security@example.com"}, Filename: "b-2.x86_64.rpm",
			Executable: "non-executable", Archive: "archive", Structured: "unstructured",
			DeployableURI: "https://registry.example/v2/app/blobs/sha256:22", DeployableSHA512: "22",
			SourceURI: "pkg:rpm/example/b@2?arch=src", Declared: true, Concluded: true},
	},
}

// completeSPDX3 is completeSPDX converted to SPDX 3.0.1 with every BSI
// field, by the converter the release runs.
func completeSPDX3(t *testing.T) string {
	t.Helper()
	doc, err := spdx3.FromSPDX23([]byte(completeSPDX), completeBSIFacts)
	if err != nil {
		t.Fatal(err)
	}
	if err := spdx3.Validate(doc); err != nil {
		t.Fatal(err)
	}
	return string(doc)
}

func TestBSI21PassesAnSPDX3DocumentWithEveryField(t *testing.T) {
	doc := completeSPDX3(t)
	if missing := checkEdited(t, MediaTypeSPDX3, doc, nil, ProfileBSI); len(missing) > 0 {
		t.Errorf("missing %+v, want nothing", missing)
	}
	d, err := ParseSBOM(MediaTypeSPDX3, []byte(doc), "test")
	if err != nil {
		t.Fatal(err)
	}
	if d.securityContact != "https://example.com/security" {
		t.Errorf("security contact %q, want the SBOM creator's URL", d.securityContact)
	}
}

// spdx3Nodes returns the package named pkg, the file it
// hasDistributionArtifact, and the relationships.
func spdx3Nodes(m map[string]any, pkg string) (p, file map[string]any, rels []map[string]any) {
	byID := map[string]map[string]any{}
	for _, n := range m["@graph"].([]any) {
		node := n.(map[string]any)
		if id, ok := node["spdxId"].(string); ok {
			byID[id] = node
			if node["type"] == "software_Package" && node["name"] == pkg {
				p = node
			}
		}
		if node["type"] == "Relationship" {
			rels = append(rels, node)
		}
	}
	for _, r := range rels {
		// The BSI fields' file, not the one SPDX 2.3's packageFileName
		// became.
		if f := byID[r["to"].([]any)[0].(string)]; r["from"] == p["spdxId"] && r["relationshipType"] == "hasDistributionArtifact" &&
			strings.Contains(fmt.Sprint(f["comment"]), "BSI") {
			file = f
		}
	}
	return p, file, rels
}

// Removing any one v2.1.0 element from an SPDX 3.0.1 document fails the
// profile, naming the element, the section and the component, as for
// CycloneDX.
func TestBSI21NamesEachElementAnSPDX3DocumentLacks(t *testing.T) {
	doc := completeSPDX3(t)
	dropRel := func(pkg, typ string) func(map[string]any) {
		return func(m map[string]any) {
			// The relationship stays, as the SBOM's element list names
			// it, but says nothing of licences any more.
			p, _, rels := spdx3Nodes(m, pkg)
			for _, r := range rels {
				if r["from"] == p["spdxId"] && r["relationshipType"] == typ {
					r["relationshipType"] = "other"
				}
			}
		}
	}
	edit := func(pkg string, f func(p, file map[string]any)) func(map[string]any) {
		return func(m map[string]any) {
			p, file, _ := spdx3Nodes(m, pkg)
			f(p, file)
		}
	}
	for _, tc := range []struct {
		name      string
		edit      func(map[string]any)
		element   string
		component string
	}{
		{"no file name", edit("a", func(_, f map[string]any) { delete(f, "name") }), "Filename of the component", "a@1"},
		{"no creator contact", edit("a", func(p, _ map[string]any) { delete(p, "originatedBy"); delete(p, "suppliedBy") }), "Component creator", "a@1"},
		{"no SHA-512 of the deployable", edit("a", func(_, f map[string]any) { delete(f, "verifiedUsing") }), "Hash value of the deployable component", "a@1"},
		{"no purposes and no BSI comment: nothing said of the file's kind", edit("a", func(_, f map[string]any) {
			delete(f, "software_additionalPurpose")
			delete(f, "comment")
		}), "", "a@1"},
		{"no purposes under the BSI comment: non-executable, no archive, structure unsaid", edit("a", func(_, f map[string]any) { delete(f, "software_additionalPurpose") }), "Structured property", "a@1"},
		{"neither container nor firmware", edit("b", func(_, f map[string]any) { f["software_additionalPurpose"] = []any{"archive"} }), "Structured property", "b@2"},
		{"no source URI", edit("a", func(p, _ map[string]any) { delete(p, "externalRef") }), "Source code URI", "a@1"},
		{"no deployable URI", edit("b", func(_, f map[string]any) { delete(f, "externalRef") }), "URI of the deployable form of the component", "b@2"},
		{"no concluded licence", dropRel("a", "hasConcludedLicense"), "Distribution licences", "a@1"},
		{"no original licence", dropRel("a", "hasDeclaredLicense"), "Original licences", "a@1"},
		{"no SBOM creator contact", func(m map[string]any) {
			for _, n := range m["@graph"].([]any) {
				if node := n.(map[string]any); node["type"] == "Organization" && node["name"] == "Example project" {
					delete(node, "externalIdentifier")
				}
			}
		}, "Creator of the SBOM", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			missing := checkEdited(t, MediaTypeSPDX3, doc, tc.edit, ProfileBSI)
			var elements []string
			for _, m := range missing {
				elements = append(elements, m.Element)
				if !strings.Contains(m.Source, "v2.1.0 §") || !strings.Contains(m.Detail, tc.component) ||
					tc.component != "" && !slices.Equal(m.Components, []string{tc.component}) {
					t.Errorf("missing %+v, want its section cited and %q named", m, tc.component)
				}
			}
			want := []string{tc.element}
			if tc.element == "" {
				want = []string{"Executable property", "Archive property", "Structured property"}
			}
			if !slices.Equal(elements, want) {
				t.Errorf("missing %q, want %q", elements, want)
			}
		})
	}
}

// Vulnerability data in an SPDX 3.0.1 document fails v2.1.0 as in
// CycloneDX.
func TestAnSPDX3DocumentCarryingVulnerabilitiesFailsBSI21(t *testing.T) {
	missing := checkEdited(t, MediaTypeSPDX3, completeSPDX3(t), func(m map[string]any) {
		p, _, _ := spdx3Nodes(m, "a")
		m["@graph"] = append(m["@graph"].([]any), map[string]any{"type": "security_Vulnerability",
			"spdxId": "https://example.com/vuln/CVE-2026-0001", "creationInfo": p["creationInfo"], "name": "CVE-2026-0001"})
	}, ProfileBSI)
	if len(missing) != 1 || missing[0].Element != "No vulnerability information" {
		b, _ := json.Marshal(missing)
		t.Errorf("missing %s, want the vulnerability data named", b)
	}
}

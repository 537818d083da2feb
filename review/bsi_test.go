package review

import (
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/release"
)

// completeBSI is a CycloneDX document carrying every field BSI
// TR-03183-2 v2.1.0 asks for, written the way the release pipeline writes
// them (sbom/bsi.go): a Go module compiled into a binary (a) and an RPM (b).
const completeBSI = `{"bomFormat":"CycloneDX","specVersion":"1.7","serialNumber":"urn:uuid:9edb240e-eea2-8440-a8c0-1c4a126d77bf",
 "metadata":{"timestamp":"2026-11-30T12:00:00Z",
  "manufacturer":{"name":"Example project","url":["https://example.com/security"]},
  "component":{"bom-ref":"root","type":"container","name":"app","version":"1"}},
 "components":[
  {"bom-ref":"a","type":"library","name":"a","version":"1","purl":"pkg:golang/example.com/a@1",
   "manufacturer":{"name":"example.com","url":["https://example.com/a"]},
   "hashes":[{"alg":"SHA-256","content":"aa"}],
   "externalReferences":[{"type":"source-distribution","url":"https://proxy.golang.org/example.com/a/@v/1.zip"},
    {"type":"distribution","url":"https://registry.example/v2/app/blobs/sha256:11","hashes":[{"alg":"SHA-512","content":"11"}]}],
   "licenses":[{"license":{"id":"MIT","acknowledgement":"declared"}},{"expression":"MIT","acknowledgement":"concluded"}],
   "properties":[{"name":"bsi:component:filename","value":"app"},{"name":"bsi:component:executable","value":"executable"},
    {"name":"bsi:component:archive","value":"no archive"},{"name":"bsi:component:structured","value":"structured"}]},
  {"bom-ref":"b","type":"library","name":"b","version":"2","purl":"pkg:rpm/example/b@2?arch=x86_64",
   "manufacturer":{"name":"Example","contact":[{"email":"security@example.com"}]},
   "hashes":[{"alg":"MD5","content":"bb"}],
   "externalReferences":[{"type":"source-distribution","url":"pkg:rpm/example/b@2?arch=src"},
    {"type":"distribution","url":"https://registry.example/v2/app/blobs/sha256:22","hashes":[{"alg":"SHA-512","content":"22"}]}],
   "licenses":[{"expression":"GPL-2.0-only AND MIT","acknowledgement":"declared"},{"expression":"GPL-2.0-only AND MIT","acknowledgement":"concluded"}],
   "properties":[{"name":"bsi:component:filename","value":"b-2.x86_64.rpm"},{"name":"bsi:component:executable","value":"non-executable"},
    {"name":"bsi:component:archive","value":"archive"},{"name":"bsi:component:structured","value":"structured"}]}],
 "dependencies":[{"ref":"root","dependsOn":["a","b"]}]}`

func TestBSI21PassesACycloneDXDocumentWithEveryField(t *testing.T) {
	if missing := checkEdited(t, MediaTypeCycloneDX, completeBSI, nil, ProfileBSI); len(missing) > 0 {
		t.Errorf("missing %+v, want nothing", missing)
	}
	// The declared licence is what the review judges; the concluded one,
	// the same here, is not counted twice.
	d, err := ParseSBOM(MediaTypeCycloneDX, []byte(completeBSI), "test")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Components[1].LicenceDeclared; got != "GPL-2.0-only AND MIT" {
		t.Errorf("declared licence %q, want the declared expression alone", got)
	}
}

// deleteProperty removes the named property of c.
func deleteProperty(c map[string]any, name string) {
	var kept []any
	for _, p := range c["properties"].([]any) {
		if p.(map[string]any)["name"] != name {
			kept = append(kept, p)
		}
	}
	c["properties"] = kept
}

// dropReferences removes the external references of c of type typ.
func dropReferences(c map[string]any, typ string) {
	var kept []any
	for _, r := range c["externalReferences"].([]any) {
		if r.(map[string]any)["type"] != typ {
			kept = append(kept, r)
		}
	}
	c["externalReferences"] = kept
}

// Removing any one v2.1.0 element fails the profile, naming the element,
// the section it comes from, and the component.
func TestBSI21NamesEachMissingElementAndTheComponent(t *testing.T) {
	for _, tc := range []struct {
		name      string
		edit      func(map[string]any)
		element   string
		component string
	}{
		{"no file name", func(m map[string]any) { deleteProperty(component(m, 1), PropertyFilenameName) }, "Filename of the component", "b@2"},
		{"no creator contact", func(m map[string]any) { component(m, 0)["manufacturer"] = map[string]any{"name": "example.com"} }, "Component creator", "a@1"},
		{"no SHA-512 of the deployable", func(m map[string]any) {
			for _, r := range component(m, 0)["externalReferences"].([]any) {
				delete(r.(map[string]any), "hashes")
			}
		}, "Hash value of the deployable component", "a@1"},
		{"an executable property outside the taxonomy", func(m map[string]any) {
			deleteProperty(component(m, 0), PropertyExecutableName)
			component(m, 0)["properties"] = append(component(m, 0)["properties"].([]any), map[string]any{"name": PropertyExecutableName, "value": "yes"})
		}, "Executable property", "a@1"},
		{"no archive property", func(m map[string]any) { deleteProperty(component(m, 1), PropertyArchiveName) }, "Archive property", "b@2"},
		{"no structured property", func(m map[string]any) { deleteProperty(component(m, 1), PropertyStructuredName) }, "Structured property", "b@2"},
		{"no source URI", func(m map[string]any) { dropReferences(component(m, 0), "source-distribution") }, "Source code URI", "a@1"},
		{"no deployable URI", func(m map[string]any) {
			dropReferences(component(m, 1), "distribution")
			component(m, 1)["hashes"] = []any{map[string]any{"alg": "SHA-512", "content": "22"}}
		}, "URI of the deployable form of the component", "b@2"},
		{"no concluded licence", func(m map[string]any) {
			component(m, 0)["licenses"] = []any{map[string]any{"license": map[string]any{"id": "MIT", "acknowledgement": "declared"}}}
		}, "Distribution licences", "a@1"},
		{"no original licence", func(m map[string]any) {
			component(m, 0)["licenses"] = []any{map[string]any{"expression": "MIT", "acknowledgement": "concluded"}}
		}, "Original licences", "a@1"},
		{"no identifier", func(m map[string]any) { delete(component(m, 1), "purl") }, "Other unique identifiers", "b@2"},
		{"no SBOM creator contact", func(m map[string]any) {
			m["metadata"].(map[string]any)["manufacturer"] = map[string]any{"name": "Example project"}
		}, "Creator of the SBOM", ""},
		{"no SBOM URI", func(m map[string]any) { delete(m, "serialNumber") }, "SBOM-URI", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			missing := checkEdited(t, MediaTypeCycloneDX, completeBSI, tc.edit, ProfileBSI)
			if len(missing) != 1 {
				t.Fatalf("missing %+v, want exactly %q", missing, tc.element)
			}
			m := missing[0]
			if m.Element != tc.element || !strings.Contains(m.Source, "v2.1.0 §") || !strings.Contains(m.Detail, tc.component) {
				t.Errorf("missing %+v, want element %q citing its section, naming %q", m, tc.element, tc.component)
			}
			if tc.component != "" && (len(m.Components) != 1 || m.Components[0] != tc.component) {
				t.Errorf("components %q, want [%s]", m.Components, tc.component)
			}
		})
	}
}

// An SBOM is no place for vulnerabilities (v2.1.0): VEX and scan results
// travel as attestations of their own.
func TestAnSBOMCarryingVulnerabilityDataFailsBSI21(t *testing.T) {
	missing := checkEdited(t, MediaTypeCycloneDX, completeBSI, func(m map[string]any) {
		m["vulnerabilities"] = []any{map[string]any{"id": "CVE-2026-0001", "affects": []any{map[string]any{"ref": "a"}},
			"analysis": map[string]any{"state": "not_affected"}}}
	}, ProfileBSI)
	if len(missing) != 1 || missing[0].Element != "No vulnerability information" || !strings.Contains(missing[0].Source, "v2.1.0") {
		t.Errorf("missing %+v, want the vulnerability data named", missing)
	}
}

// v2.1.0 allows CycloneDX 1.6 or later and SPDX 3.0.1 or later; SPDX 2 is
// not checked.
func TestBSI21IsCheckedOnlyOnTheFormatsItAllows(t *testing.T) {
	for format, want := range map[string]bool{
		"CycloneDX 1.5": false, "CycloneDX 1.6": true, "CycloneDX 1.7": true, "CycloneDX 2.0": true,
		"SPDX-2.3": false, "SPDX-3.0.0": false, "SPDX-3.0.1": true, "": false,
	} {
		if got, why := formatChecked(ProfileBSI, format); got != want || !got && why == "" {
			t.Errorf("%q: checked %v (%q), want %v with a reason when not", format, got, why, want)
		}
		if got, _ := formatChecked(ProfileBSI11, format); !got {
			t.Errorf("v1.1 not checked on %q", format)
		}
	}
}

// A release whose image has only SPDX 2.3 fails v2.1.0 for the format; one
// with a CycloneDX document is checked on that, and its SPDX 2.3 document
// says why it was not.
func TestAnImageWithoutAnAllowedFormatFailsBSI21(t *testing.T) {
	lp, err := DefaultLicencePolicy()
	if err != nil {
		t.Fatal(err)
	}
	const img = "sha256:" + "11111111111111111111111111111111" + "11111111111111111111111111111111"
	lock := &release.Lock{Version: "v1.0.0", Artifacts: []release.Artifact{{Kind: release.KindImage, Name: "app", Platform: "linux/amd64", Digest: img}}}
	spdx := SBOM{Artifact: release.Artifact{Kind: release.KindSBOM, Subject: img, ArtifactType: MediaTypeSPDX, Repository: "registry.example/app", Digest: "sha256:aa"}, Data: []byte(completeSPDX)}
	cdx := SBOM{Artifact: release.Artifact{Kind: release.KindSBOM, Subject: img, ArtifactType: MediaTypeCycloneDX, Repository: "registry.example/app", Digest: "sha256:bb"}, Data: []byte(completeBSI)}

	r, err := Build(Input{Lock: lock, SBOMs: []SBOM{spdx}, Licences: lp, Profile: ProfileBSI})
	if err != nil {
		t.Fatal(err)
	}
	if f := r.Failures([]string{CheckMinimumElements}); len(f) != 1 || !strings.Contains(f[0], "SBOM format") {
		t.Errorf("SPDX 2.3 alone: failures %q, want the format named", f)
	}
	r, err = Build(Input{Lock: lock, SBOMs: []SBOM{spdx, cdx}, Licences: lp, Profile: ProfileBSI})
	if err != nil {
		t.Fatal(err)
	}
	if f := r.Failures([]string{CheckMinimumElements}); len(f) != 0 {
		t.Errorf("with CycloneDX 1.7: failures %q, want none", f)
	}
	for _, c := range r.MinimumElements {
		if c.URI != "registry.example/app@"+c.Digest {
			t.Errorf("%s: URI %q, want its digest reference", c.Format, c.URI)
		}
		if strings.HasPrefix(c.Format, "SPDX-2") != (c.NotChecked != "") {
			t.Errorf("%s: not checked %q, want a reason exactly for SPDX 2", c.Format, c.NotChecked)
		}
	}
}

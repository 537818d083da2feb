package review

import "testing"

// The review parses documents from outside: SBOMs from a release, the gate
// report and the licence policy. None may panic or hang on any input.

func FuzzParseSBOM(f *testing.F) {
	f.Add(true, []byte(`{"spdxVersion":"SPDX-2.3","SPDXID":"SPDXRef-DOCUMENT","creationInfo":{"created":"2026-11-30T12:00:00Z","creators":["Organization: x"]},"packages":[{"name":"a","SPDXID":"SPDXRef-a","versionInfo":"1","licenseDeclared":"MIT","supplier":"NOASSERTION","externalRefs":[{"referenceCategory":"PACKAGE-MANAGER","referenceType":"purl","referenceLocator":"pkg:golang/a@1"}]}],"relationships":[{"spdxElementId":"SPDXRef-DOCUMENT","relatedSpdxElement":"SPDXRef-a","relationshipType":"DESCRIBES"}]}`))
	f.Add(false, []byte(`{"bomFormat":"CycloneDX","specVersion":"1.6","metadata":{"timestamp":"2026-11-30T12:00:00Z"},"components":[{"type":"library","name":"a","version":"1","purl":"pkg:golang/a@1","licenses":[{"expression":"MIT OR Apache-2.0"}]}],"dependencies":[{"ref":"x","dependsOn":["a"]}]}`))
	f.Add(true, []byte(completeSPDX))
	f.Add(false, []byte(completeCycloneDX))
	f.Add(true, []byte(`{"spdxVersion":"SPDX-2.3","packages":[null]}`))
	f.Add(false, []byte(`{"bomFormat":"CycloneDX","components":[{"licenses":[{"license":{}}]}]}`))
	f.Fuzz(func(t *testing.T, spdx bool, data []byte) {
		mt := MediaTypeCycloneDX
		if spdx {
			mt = MediaTypeSPDX
		}
		d, err := ParseSBOM(mt, data, "fuzz")
		if err != nil {
			return
		}
		p := &LicencePolicy{Allow: []string{"MIT"}, Deny: []string{"GPL-3.0-only"}}
		for _, c := range d.Components {
			p.Judge(c.LicenceDeclared)
		}
		for _, pr := range Profiles() {
			for _, m := range d.Check(pr) {
				if m.Element == "" || m.Source == "" || m.Detail == "" {
					t.Fatalf("%s: a missing element without name, source or detail: %+v", pr, m)
				}
			}
		}
	})
}

func FuzzParseGateReport(f *testing.F) {
	f.Add([]byte(`{"passed":true,"findings":[{"image":"a","target":"b","vulnerabilityID":"CVE-2099-0001","package":"p","installedVersion":"1","severity":"HIGH","decision":"EXCEPTED","reason":"r"}]}`))
	f.Add([]byte(`{"passed":true,"findings":[{"decision":"FAIL"}]}`))
	f.Add([]byte(`{"passed":false}{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseGateReport(data)
		if err != nil {
			return
		}
		for _, fd := range r.Findings {
			if fd.Decision.Blocks() && r.Passed {
				t.Fatalf("accepted a passed report with a blocking finding: %s", data)
			}
		}
	})
}

func FuzzParseLicencePolicy(f *testing.F) {
	f.Add([]byte("apiVersion: reloader.dev/licence-policy/v1\nallow: [MIT, Apache-2.0]\ndeny: [GPL-3.0-only]\n"))
	f.Add([]byte("apiVersion: reloader.dev/licence-policy/v1\nallow: [mit]\ndeny: [MIT]\n"))
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseLicencePolicy(data)
		if err != nil {
			return
		}
		if len(p.Allow) == 0 {
			t.Fatalf("accepted a policy that allows nothing: %q", data)
		}
		p.Judge("MIT AND (Apache-2.0 OR GPL-3.0-only)")
	})
}

// The signed review comes out of a release archive: its predicate is read
// strictly and compared with a recomputation, neither of which may panic.
func FuzzParseAttestation(f *testing.F) {
	f.Add([]byte(`{"review":{"schema":"https://reloader.dev/schemas/review/v2","release":{"version":"v1.0.0"}},"htmlDigest":"sha256:` + "0000000000000000000000000000000000000000000000000000000000000000" + `"}`))
	f.Add([]byte(`{"review":{"schema":"x"},"htmlDigest":"sha256:1"}`))
	f.Add([]byte(`{"review":null,"review":{}}`))
	f.Add([]byte(`[1,{"a":[null]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := FirstDifference(data, data); err == nil {
			if d, _ := FirstDifference(data, data); d != "" {
				t.Fatalf("a document differs from itself at %s: %q", d, data)
			}
		}
		a, err := ParseAttestation(data)
		if err != nil {
			return
		}
		if a.Review == nil || a.Review.Schema != Schema {
			t.Fatalf("accepted a signed review without the schema: %q", data)
		}
	})
}

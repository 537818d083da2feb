package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/internal/exitcode"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/review"
)

// checkBSIElementsRemoved takes the CycloneDX SBOMs of a release made by
// the pipeline, which pass BSI TR-03183-2 v2.1.0, removes one required
// element at a time from one component (or adds vulnerability data to the
// document), and expects a refusal (exit 3) naming the element and the
// component.
func checkBSIElementsRemoved(t *testing.T, rel *releasetest.Release) {
	t.Helper()
	sboms := readReleaseSBOMs(t, rel)
	lp, err := review.DefaultLicencePolicy()
	if err != nil {
		t.Fatal(err)
	}
	in := review.Input{Lock: rel.Lock, SBOMs: sboms, Licences: lp, Profile: review.ProfileBSI, Now: rel.Lock.Created}
	r, err := review.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if f := r.Failures([]string{review.CheckMinimumElements}); len(f) > 0 {
		t.Fatalf("the release as made fails %s: %q", review.ProfileBSI, f)
	}
	for _, tc := range []struct {
		name, element string
		edit          func(doc, comp map[string]any)
	}{
		{"a filename", "Filename of the component", func(_, comp map[string]any) { dropProperty(comp, review.PropertyFilenameName) }},
		{"a contact", "Component creator", func(_, comp map[string]any) { delete(comp, "manufacturer") }},
		{"a SHA-512", "Hash value of the deployable component", func(_, comp map[string]any) {
			comp["hashes"] = keep(comp["hashes"], func(h map[string]any) bool { return h["alg"] != "SHA-512" })
			for _, ref := range asMaps(comp["externalReferences"]) {
				delete(ref, "hashes")
			}
		}},
		{"vulnerability data in the SBOM", "No vulnerability information", func(doc, comp map[string]any) {
			doc["vulnerabilities"] = []any{map[string]any{"id": "CVE-2026-0001", "affects": []any{map[string]any{"ref": comp["bom-ref"]}}}}
		}},
	} {
		t.Run("without "+tc.name, func(t *testing.T) {
			edited, label := editOneCycloneDX(t, sboms, tc.edit)
			in := in
			in.SBOMs = edited
			r, err := review.Build(in)
			if err != nil {
				t.Fatal(err)
			}
			f := r.Failures([]string{review.CheckMinimumElements})
			want := tc.element + ": 1 of"
			if tc.element == "No vulnerability information" {
				want, label = tc.element+": the SBOM carries vulnerability data", ""
			}
			if len(f) != 1 || !strings.Contains(f[0], want) || !strings.Contains(f[0], label) {
				t.Errorf("failures %q, want %q naming %s", f, want, label)
			}
			if code := exitcode.Of(reviewFailed{f}); code != exitcode.Refused {
				t.Errorf("exit %d, want %d (refused)", code, exitcode.Refused)
			}
		})
	}
}

// editOneCycloneDX edits the first CycloneDX document's first component
// that is neither a file nor the operating system, returning the SBOMs
// with that document replaced and the component's label (name@version).
func editOneCycloneDX(t *testing.T, sboms []review.SBOM, edit func(doc, comp map[string]any)) ([]review.SBOM, string) {
	t.Helper()
	out := append([]review.SBOM(nil), sboms...)
	for i, s := range out {
		if s.Artifact.ArtifactType != review.MediaTypeCycloneDX {
			continue
		}
		var doc map[string]any
		if err := json.Unmarshal(s.Data, &doc); err != nil {
			t.Fatal(err)
		}
		for _, comp := range asMaps(doc["components"]) {
			if comp["type"] == "file" || comp["type"] == "operating-system" {
				continue
			}
			edit(doc, comp)
			data, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			out[i].Data = data
			return out, comp["name"].(string) + "@" + comp["version"].(string)
		}
	}
	t.Fatal("the release has no CycloneDX SBOM with a component")
	return nil, ""
}

func asMaps(v any) []map[string]any {
	var out []map[string]any
	list, _ := v.([]any)
	for _, x := range list {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func keep(v any, ok func(map[string]any) bool) []any {
	var out []any
	for _, m := range asMaps(v) {
		if ok(m) {
			out = append(out, m)
		}
	}
	return out
}

func dropProperty(comp map[string]any, name string) {
	comp["properties"] = keep(comp["properties"], func(p map[string]any) bool { return p["name"] != name })
}

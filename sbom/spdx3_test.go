package sbom

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/reloader-dev/reloader/review"
	"github.com/reloader-dev/reloader/sbom/spdx3/spdx3test"
)

// The SPDX 3.0.1 SBOM of the real controller's image is valid against the
// SPDX project's JSON schema, repeats byte for byte, and says what the SPDX
// 2.3 document it is converted from says, component by component.
func TestSPDX3SBOMIsValidRepeatsAndSaysWhatSPDX23Says(t *testing.T) {
	if testing.Short() {
		t.Skip("runs syft")
	}
	v, err := spdx3test.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	img := releaseImage(t)
	opts := releaseOptions(t)
	docs, err := Generate(context.Background(), img, opts)
	if err != nil {
		t.Fatal(err)
	}
	byType := map[string][]byte{}
	for _, d := range docs {
		byType[d.MediaType] = d.Data
	}
	doc := byType[MediaTypeSPDX3]
	if doc == nil {
		t.Fatalf("Generate wrote no %s document", MediaTypeSPDX3)
	}
	if err := v.Validate(doc); err != nil {
		t.Fatalf("the SPDX 3.0.1 SBOM is not valid against the SPDX 3.0.1 JSON schema: %v", err)
	}
	var head struct {
		Context string           `json:"@context"`
		Graph   []map[string]any `json:"@graph"`
	}
	if err := json.Unmarshal(doc, &head); err != nil || head.Context != "https://spdx.org/rdf/3.0.1/spdx-context.jsonld" {
		t.Fatalf("SPDX 3 document context %q: %v", head.Context, err)
	}
	for _, n := range head.Graph {
		if n["type"] == "CreationInfo" && (n["specVersion"] != "3.0.1" || n["created"] != "2026-11-30T12:00:00Z") {
			t.Errorf("creation information %v, want specVersion 3.0.1 created at the release time", n)
		}
	}
	again, err := Generate(context.Background(), img, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range again {
		if d.MediaType == MediaTypeSPDX3 && !bytes.Equal(d.Data, doc) {
			t.Error("the SPDX 3.0.1 SBOM differs between two runs")
		}
	}
	two, err := review.ParseSBOM(MediaTypeSPDX, byType[MediaTypeSPDX], "SPDX 2.3")
	if err != nil {
		t.Fatal(err)
	}
	three, err := review.ParseSBOM(MediaTypeSPDX3, doc, "SPDX 3.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if three.Format != "SPDX-3.0.1" {
		t.Errorf("the review reads the SPDX 3 document as %q", three.Format)
	}
	if len(three.Components) != len(two.Components) || len(two.Components) < 20 {
		t.Fatalf("SPDX 3.0.1 lists %d components, SPDX 2.3 %d", len(three.Components), len(two.Components))
	}
	want := map[string]review.Component{}
	for _, c := range two.Components {
		want[c.PURL] = c
	}
	for _, c := range three.Components {
		if w, ok := want[c.PURL]; !ok || !reflect.DeepEqual(w, c) {
			t.Errorf("SPDX 3.0.1 says %+v\n     SPDX 2.3 says %+v", c, w)
		}
	}
	for _, p := range []review.Profile{review.ProfileNTIA2021, review.ProfileCISA2025} {
		if missing := three.Check(p); len(missing) > 0 {
			t.Errorf("the SPDX 3.0.1 SBOM lacks %s elements: %+v", p, missing)
		}
	}
}

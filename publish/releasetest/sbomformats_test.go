package releasetest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	cdx "github.com/CycloneDX/cyclonedx-go"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	spdxjson "github.com/spdx/tools-golang/json"
	v3 "github.com/spdx/tools-golang/spdx/v3/v3_0"

	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/review"
	"github.com/reloader-dev/reloader/sbom/spdx3/spdx3test"
)

// A release publishes each image's SBOM three ways, SPDX 2.3, SPDX 3.0.1
// and CycloneDX, each attested with its own predicate type, and the three
// list the same components with the same versions, hashes, licences and
// suppliers. The SPDX 3.0.1 documents are valid against the SPDX project's
// schema.
func TestReleaseSBOMsAgreeInThreeFormats(t *testing.T) {
	ctx := context.Background()
	v, err := spdx3test.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: startRegistry(t), Signer: s})
	if err != nil {
		t.Fatal(err)
	}
	bySubject := map[string]map[string][]byte{}
	predicates := map[string]string{}
	for _, a := range rel.Lock.Artifacts {
		if a.Kind != release.KindSBOM {
			continue
		}
		data, err := artifactContent(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if bySubject[a.Subject] == nil {
			bySubject[a.Subject] = map[string][]byte{}
		}
		bySubject[a.Subject][a.ArtifactType] = data
		predicates[a.ArtifactType] = a.PredicateType
	}
	wantPredicates := map[string]string{review.MediaTypeSPDX: "https://spdx.dev/Document",
		review.MediaTypeSPDX3: "https://spdx.dev/Document/v3", review.MediaTypeCycloneDX: "https://cyclonedx.org/bom"}
	if fmt.Sprint(predicates) != fmt.Sprint(wantPredicates) {
		t.Errorf("SBOM predicate types %v, want %v", predicates, wantPredicates)
	}
	images := 0
	for _, a := range rel.Lock.Artifacts {
		if a.Kind != release.KindImage {
			continue
		}
		images++
		docs := bySubject[a.Digest]
		if len(docs) != 3 {
			t.Fatalf("image %s %s has %d SBOMs, want 3", a.Name, a.Platform, len(docs))
		}
		if err := v.Validate(docs[review.MediaTypeSPDX3]); err != nil {
			t.Errorf("the SPDX 3.0.1 SBOM of %s %s is not valid against the schema: %v", a.Name, a.Platform, err)
		}
		what := a.Name + " " + a.Platform
		compareFormats(t, what, docs)
		compareBSIFields(t, what, docs)
	}
	if images == 0 {
		t.Fatal("the release has no images")
	}
	checkBSIOnSPDX3Alone(t, rel, bySubject)
}

// compareFormats holds the components review reads from each format, and
// the hashes each format's own library reads, to SPDX 2.3's.
func compareFormats(t *testing.T, what string, docs map[string][]byte) {
	t.Helper()
	components := map[string]map[string]string{}
	for _, mt := range []string{review.MediaTypeSPDX, review.MediaTypeSPDX3, review.MediaTypeCycloneDX} {
		d, err := review.ParseSBOM(mt, docs[mt], what)
		if err != nil {
			t.Fatal(err)
		}
		components[mt] = map[string]string{}
		for _, c := range d.Components {
			components[mt][c.Name+"@"+c.Version] = fmt.Sprintf("purl=%s licence=%s supplier=%s", c.PURL, outerParens(c.LicenceDeclared), supplierName(c.Supplier))
		}
	}
	hashes, err := componentHashes(docs)
	if err != nil {
		t.Fatal(err)
	}
	ref := components[review.MediaTypeSPDX]
	if len(ref) < 2 {
		t.Fatalf("%s: the SPDX 2.3 SBOM lists %d components", what, len(ref))
	}
	for _, mt := range []string{review.MediaTypeSPDX3, review.MediaTypeCycloneDX} {
		for _, k := range sortedUnion(ref, components[mt]) {
			if ref[k] != components[mt][k] {
				t.Errorf("%s %s:\n  SPDX 2.3: %s\n  %s: %s", what, k, ref[k], mt, components[mt][k])
			}
			if h2, h := hashes[review.MediaTypeSPDX][k], hashes[mt][k]; h2 != h {
				t.Errorf("%s %s hashes:\n  SPDX 2.3: %s\n  %s: %s", what, k, h2, mt, h)
			}
		}
	}
}

// componentHashes reads every component's hashes ("SHA256:…" sorted) with
// each format's library, keyed by name@version.
func componentHashes(docs map[string][]byte) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	add := func(mt, key string, hs []string) {
		if out[mt] == nil {
			out[mt] = map[string]string{}
		}
		slices.Sort(hs)
		out[mt][key] = strings.Join(hs, " ")
	}
	two, err := spdxjson.Read(bytes.NewReader(docs[review.MediaTypeSPDX]))
	if err != nil {
		return nil, err
	}
	for _, p := range two.Packages {
		var hs []string
		for _, c := range p.PackageChecksums {
			hs = append(hs, strings.ReplaceAll(string(c.Algorithm), "-", "")+":"+c.Value)
		}
		add(review.MediaTypeSPDX, p.PackageName+"@"+p.PackageVersion, hs)
	}
	var three v3.Document
	if err := three.FromJSON(bytes.NewReader(docs[review.MediaTypeSPDX3])); err != nil {
		return nil, err
	}
	for _, e := range three.Elements {
		p, ok := e.(*v3.Package)
		if !ok {
			continue
		}
		var hs []string
		for _, m := range p.VerifiedUsing {
			if h, ok := m.(*v3.Hash); ok {
				alg := h.Algorithm.GetID()
				hs = append(hs, strings.ToUpper(alg[strings.LastIndex(alg, "/")+1:])+":"+h.Value)
			}
		}
		add(review.MediaTypeSPDX3, p.Name+"@"+p.Version, hs)
	}
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(docs[review.MediaTypeCycloneDX]), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		return nil, err
	}
	if bom.Components != nil {
		for _, c := range *bom.Components {
			var hs []string
			if c.Hashes != nil {
				for _, h := range *c.Hashes {
					hs = append(hs, strings.ReplaceAll(string(h.Algorithm), "-", "")+":"+h.Value)
				}
			}
			add(review.MediaTypeCycloneDX, c.Name+"@"+c.Version, hs)
		}
	}
	return out, nil
}

// supplierName is a supplier as CycloneDX names it: without SPDX's actor
// type, and without what SPDX 2's actor syntax ("Organization: name
// (email)") reads as the contact, a trailing parenthesis (the stand-in UBI
// base's RPM vendor is "Red Hat, Inc. (stand-in)").
func supplierName(s string) string {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "Organization: "), "Person: ")
	if i := strings.LastIndex(s, " ("); i > 0 && strings.HasSuffix(s, ")") {
		s = s[:i]
	}
	return s
}

// outerParens drops parentheses around a whole licence expression, which
// say nothing ("(MIT AND GPL-2.0-or-later)").
func outerParens(e string) string {
	for strings.HasPrefix(e, "(") && strings.HasSuffix(e, ")") {
		inner, depth := e[1:len(e)-1], 0
		for _, r := range inner {
			switch r {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth < 0 {
				return e
			}
		}
		e = inner
	}
	return e
}

func sortedUnion(a, b map[string]string) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// artifactContent is the single layer of an SBOM artifact.
func artifactContent(ctx context.Context, a release.Artifact) ([]byte, error) {
	ref, err := name.NewDigest(a.Repository + "@" + a.Digest)
	if err != nil {
		return nil, err
	}
	img, err := remote.Image(ref, remote.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("reading SBOM %s: %w", ref, err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		return nil, fmt.Errorf("reading SBOM %s: %d layers: %v", ref, len(layers), err)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		return nil, fmt.Errorf("reading SBOM %s: %w", ref, err)
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

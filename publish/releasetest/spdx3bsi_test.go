package releasetest_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/review"
)

// checkBSIOnSPDX3Alone is a reviewer holding only the release's SPDX 3.0.1
// documents: `review --profile bsi-tr-03183-2 --fail-on minimum-elements`
// (review.Build with ProfileBSI, and its minimum-elements failures, which
// the CLI turns into exit 3) passes on them, every one of them checked;
// removing one element from one package of one document fails, naming
// the element and the package.
func checkBSIOnSPDX3Alone(t *testing.T, rel *releasetest.Release, docs map[string]map[string][]byte) {
	t.Helper()
	var sboms []review.SBOM
	for _, a := range rel.Lock.Artifacts {
		if a.Kind == release.KindSBOM && a.ArtifactType == review.MediaTypeSPDX3 {
			sboms = append(sboms, review.SBOM{Artifact: a, Data: docs[a.Subject][a.ArtifactType]})
		}
	}
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
		t.Fatalf("the release's SPDX 3.0.1 documents alone fail %s: %q", review.ProfileBSI, f)
	}
	for _, c := range r.MinimumElements {
		if c.Format != "SPDX-3.0.1" || c.NotChecked != "" {
			t.Errorf("%s %s: %s not checked (%q), want every SPDX 3.0.1 document checked", c.Image, c.Platform, c.Format, c.NotChecked)
		}
	}
	for _, tc := range []struct{ name, element string }{
		{"a filename", "Filename of the component"},
		{"a contact", "Component creator"},
		{"a SHA-512", "Hash value of the deployable component"},
		{"vulnerability data in the SBOM", "No vulnerability information"},
	} {
		t.Run("SPDX 3.0.1 without "+tc.name, func(t *testing.T) {
			edited := slices.Clone(sboms)
			var label string
			edited[0].Data, label = removeFromSPDX3(t, edited[0].Data, tc.name)
			in := in
			in.SBOMs = edited
			r, err := review.Build(in)
			if err != nil {
				t.Fatal(err)
			}
			var missing []review.MissingElement
			for _, c := range r.MinimumElements {
				missing = append(missing, c.Missing...)
			}
			if len(missing) != 1 || missing[0].Element != tc.element || label != "" && !slices.Equal(missing[0].Components, []string{label}) {
				t.Fatalf("missing %+v, want %q of %q alone", missing, tc.element, label)
			}
			f := r.Failures([]string{review.CheckMinimumElements})
			if len(f) != 1 || !strings.Contains(f[0], tc.element) || !strings.Contains(f[0], label) || !strings.Contains(f[0], "SPDX-3.0.1") {
				t.Errorf("failures %q, want %q of %s in the SPDX 3.0.1 document", f, tc.element, label)
			}
		})
	}
}

// removeFromSPDX3 removes one element from the first Go module package
// that has a distribution artifact, touching no other package (the file
// it shares with others is copied), and returns the package's label. The
// element goes from every place the TR's mapping lets it be: the contact
// from the creator and the supplier, the SHA-512 from the file and the
// package (the main module's and the standard library's carry their
// binary's).
func removeFromSPDX3(t *testing.T, data []byte, what string) ([]byte, string) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	graph := doc["@graph"].([]any)
	byID := map[string]map[string]any{}
	for _, n := range graph {
		node := n.(map[string]any)
		if id, ok := node["spdxId"].(string); ok {
			byID[id] = node
		}
	}
	var pkg, rel map[string]any
	for _, n := range graph {
		node := n.(map[string]any)
		from, _ := node["from"].(string)
		p := byID[from]
		if node["relationshipType"] == "hasDistributionArtifact" && strings.HasPrefix(fmt.Sprint(p["software_packageUrl"]), "pkg:golang/") {
			pkg, rel = p, node
			break
		}
	}
	if pkg == nil {
		t.Fatal("no Go module package with a distribution artifact in the SPDX 3.0.1 document")
	}
	label := pkg["name"].(string) + "@" + pkg["software_packageVersion"].(string)
	// A copy of the file, for this package alone.
	file := map[string]any{}
	for k, v := range byID[rel["to"].([]any)[0].(string)] {
		file[k] = v
	}
	file["spdxId"] = file["spdxId"].(string) + "-edited"
	rel["to"] = []any{file["spdxId"]}
	switch what {
	case "a filename":
		delete(file, "name")
	case "a SHA-512":
		delete(file, "verifiedUsing")
		var kept []any
		for _, h := range jsonList(pkg["verifiedUsing"]) {
			if h["algorithm"] != "sha512" {
				kept = append(kept, h)
			}
		}
		pkg["verifiedUsing"] = kept
	case "a contact":
		delete(pkg, "originatedBy")
		delete(pkg, "suppliedBy")
	case "vulnerability data in the SBOM":
		label = ""
		graph = append(graph, map[string]any{"type": "security_Vulnerability", "spdxId": "https://example.com/vuln/CVE-2026-0001",
			"creationInfo": pkg["creationInfo"], "name": "CVE-2026-0001"})
	}
	doc["@graph"] = append(graph, file)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out, label
}

// compareBSIFields holds what BSI TR-03183-2 v2.1.0 asks of each component
// beyond the fields compareFormats compares (file name and kind, the
// deployable's URI and SHA-512, the source URI, the creator's contact) to
// the same in SPDX 3.0.1 and CycloneDX, read from each document as the
// TR's mapping for each format places it (§8.2).
func compareBSIFields(t *testing.T, what string, docs map[string][]byte) {
	t.Helper()
	cdx, three := cdxBSIFields(t, docs[review.MediaTypeCycloneDX]), spdx3BSIFields(t, docs[review.MediaTypeSPDX3])
	described := 0
	for _, k := range sortedUnion(cdx, three) {
		if cdx[k] != three[k] {
			t.Errorf("%s %s:\n  CycloneDX:  %s\n  SPDX 3.0.1: %s", what, k, cdx[k], three[k])
		}
		if strings.Contains(cdx[k], "file=") && !strings.Contains(cdx[k], "file= ") {
			described++
		}
	}
	if described == 0 {
		t.Errorf("%s: no component has a file name in either format", what)
	}
}

func bsiSummary(file, kind, uri, sha512, source, creator string) string {
	return fmt.Sprintf("file=%s kind=%s deployable=%s sha512=%s source=%s creator=%s", file, kind, uri, sha512, source, creator)
}

func cdxBSIFields(t *testing.T, data []byte) map[string]string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range jsonList(doc["components"]) {
		if c["type"] == "file" || c["type"] == "operating-system" {
			continue
		}
		props := map[string]string{}
		for _, p := range jsonList(c["properties"]) {
			props[fmt.Sprint(p["name"])] = fmt.Sprint(p["value"])
		}
		var kind []string
		for _, n := range []string{review.PropertyExecutableName, review.PropertyArchiveName, review.PropertyStructuredName} {
			if v, ok := props[n]; ok {
				kind = append(kind, v)
			}
		}
		var uri, sha, source string
		for _, r := range jsonList(c["externalReferences"]) {
			switch {
			case r["type"] == "distribution" && uri == "":
				uri = fmt.Sprint(r["url"])
				for _, h := range jsonList(r["hashes"]) {
					if h["alg"] == "SHA-512" {
						sha = fmt.Sprint(h["content"])
					}
				}
			case r["type"] == "source-distribution" && source == "":
				source = fmt.Sprint(r["url"])
			}
		}
		var creator string
		if m, ok := c["manufacturer"].(map[string]any); ok {
			var contact []string
			for _, u := range asList(m["url"]) {
				contact = append(contact, fmt.Sprint(u))
			}
			for _, p := range jsonList(m["contact"]) {
				contact = append(contact, fmt.Sprint(p["email"]))
			}
			if len(contact) > 0 {
				slices.Sort(contact)
				creator = fmt.Sprint(m["name"]) + " " + strings.Join(contact, ",")
			}
		}
		out[fmt.Sprint(c["name"])+"@"+fmt.Sprint(c["version"])] = bsiSummary(props[review.PropertyFilenameName], strings.Join(kind, ","), uri, sha, source, creator)
	}
	return out
}

func spdx3BSIFields(t *testing.T, data []byte) map[string]string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	graph := jsonList(doc["@graph"])
	byID := map[string]map[string]any{}
	artifact := map[string]string{}
	for _, n := range graph {
		if id, ok := n["spdxId"].(string); ok {
			byID[id] = n
		}
		if n["relationshipType"] == "hasDistributionArtifact" {
			artifact[fmt.Sprint(n["from"])] = fmt.Sprint(asList(n["to"])[0])
		}
	}
	out := map[string]string{}
	for _, p := range graph {
		if p["type"] != "software_Package" || p["software_primaryPurpose"] == "container" || p["software_primaryPurpose"] == "operatingSystem" {
			continue
		}
		var file, kind, uri, sha, source, creator string
		if f, ok := byID[artifact[fmt.Sprint(p["spdxId"])]]; ok {
			file, kind = fmt.Sprint(f["name"]), spdx3Kind(asList(f["software_additionalPurpose"]))
			uri = refLocator(f, "binaryArtifact")
			for _, h := range jsonList(f["verifiedUsing"]) {
				if h["algorithm"] == "sha512" {
					sha = fmt.Sprint(h["hashValue"])
				}
			}
		}
		source = refLocator(p, "sourceArtifact")
		for _, o := range asList(p["originatedBy"]) {
			org := byID[fmt.Sprint(o)]
			var contact []string
			for _, id := range jsonList(org["externalIdentifier"]) {
				contact = append(contact, fmt.Sprint(id["identifier"]))
			}
			slices.Sort(contact)
			creator = fmt.Sprint(org["name"]) + " " + strings.Join(contact, ",")
		}
		out[fmt.Sprint(p["name"])+"@"+fmt.Sprint(p["software_packageVersion"])] = bsiSummary(file, kind, uri, sha, source, creator)
	}
	return out
}

// spdx3Kind reads SPDX 3 purposes back as the BSI CycloneDX taxonomy's
// values (§8.2): no "executable" is non-executable, no "archive" no
// archive, "container" structured and "firmware" unstructured.
func spdx3Kind(purposes []any) string {
	if len(purposes) == 0 {
		return ""
	}
	kind := []string{"non-executable", "no archive", ""}
	for _, p := range purposes {
		switch p {
		case "executable":
			kind[0] = "executable"
		case "archive":
			kind[1] = "archive"
		case "container":
			kind[2] = "structured"
		case "firmware":
			kind[2] = "unstructured"
		}
	}
	return strings.Join(kind, ",")
}

func refLocator(n map[string]any, typ string) string {
	for _, r := range jsonList(n["externalRef"]) {
		if r["externalRefType"] == typ {
			if l := asList(r["locator"]); len(l) > 0 {
				return fmt.Sprint(l[0])
			}
		}
	}
	return ""
}

func asList(v any) []any { l, _ := v.([]any); return l }

func jsonList(v any) []map[string]any {
	var out []map[string]any
	for _, x := range asList(v) {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

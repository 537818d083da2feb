package sbom

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reloader-dev/reloader/sbom/spdx3"
)

// spdx3Facts reads from the finished CycloneDX document what BSI
// TR-03183-2 v2.1.0 asks beyond SPDX 2.3's fields (describeDeployables
// wrote it), for the SPDX 3.0.1 document to say the same: the three
// formats are one list of components, and these fields are written once,
// here read back rather than derived a second time.
func spdx3Facts(cdx []byte) (spdx3.Facts, error) {
	var doc map[string]any
	if err := json.Unmarshal(cdx, &doc); err != nil {
		return spdx3.Facts{}, fmt.Errorf("reading the CycloneDX document for SPDX 3.0.1: %w", err)
	}
	f := spdx3.Facts{Components: map[string]spdx3.Component{}}
	if md, _ := doc["metadata"].(map[string]any); md != nil {
		f.Producer = cdxAgent(md["manufacturer"])
	}
	comps, _ := doc["components"].([]any)
	for _, c := range comps {
		comp, _ := c.(map[string]any)
		if comp == nil || comp["type"] == "file" || comp["type"] == "operating-system" {
			continue
		}
		id := cdxPackageID(str(comp["bom-ref"]))
		if id == "" {
			continue
		}
		if _, dup := f.Components[id]; dup {
			return spdx3.Facts{}, fmt.Errorf("reading the CycloneDX document for SPDX 3.0.1: two components are package %s", id)
		}
		f.Components[id] = cdxComponentFacts(comp)
	}
	return f, nil
}

// cdxPackageID is syft's package ID in a bom-ref: the package-id
// qualifier of a PURL ("pkg:golang/x@v1?package-id=9b0d215daee3bf42"), or
// the bom-ref itself for a package without a PURL.
func cdxPackageID(ref string) string {
	if _, after, ok := strings.Cut(ref, "package-id="); ok {
		id, _, _ := strings.Cut(after, "&")
		return id
	}
	if strings.ContainsAny(ref, ":/?@") {
		return ""
	}
	return ref
}

func cdxComponentFacts(comp map[string]any) spdx3.Component {
	props := propertyValues(comp)
	c := spdx3.Component{Creator: cdxAgent(comp["manufacturer"]), Filename: props[PropertyFilename],
		Executable: props[PropertyExecutable], Archive: props[PropertyArchive], Structured: props[PropertyStructured]}
	c.Creator.Derived = props[CreatorDerivedProperty] == "true"
	refs, _ := comp["externalReferences"].([]any)
	for _, r := range refs {
		ref, _ := r.(map[string]any)
		url := str(ref["url"])
		switch str(ref["type"]) {
		case "distribution":
			if c.DeployableURI == "" {
				c.DeployableURI, c.DeployableSHA512 = url, sha512Of(ref["hashes"])
			}
		case "source-distribution":
			if c.SourceURI == "" {
				c.SourceURI = url
			}
		case "rfc-9116":
			c.SecurityTxt = url
		}
	}
	ls, _ := comp["licenses"].([]any)
	for _, l := range ls {
		lm, _ := l.(map[string]any)
		ack := str(lm["acknowledgement"])
		if lic, _ := lm["license"].(map[string]any); lic != nil && ack == "" {
			ack = str(lic["acknowledgement"])
		}
		c.Declared = c.Declared || ack == "declared"
		c.Concluded = c.Concluded || ack == "concluded"
	}
	return c
}

// cdxAgent reads an organizational entity: its name, first URL and first
// email address.
func cdxAgent(v any) spdx3.Agent {
	org, _ := v.(map[string]any)
	if org == nil {
		return spdx3.Agent{}
	}
	a := spdx3.Agent{Name: str(org["name"])}
	urls, _ := org["url"].([]any)
	for _, u := range urls {
		if a.URL = strings.TrimSpace(str(u)); a.URL != "" {
			break
		}
	}
	contacts, _ := org["contact"].([]any)
	for _, c := range contacts {
		cm, _ := c.(map[string]any)
		if a.Email = strings.TrimSpace(str(cm["email"])); a.Email != "" {
			break
		}
	}
	return a
}

func sha512Of(v any) string {
	hs, _ := v.([]any)
	for _, h := range hs {
		hm, _ := h.(map[string]any)
		if str(hm["alg"]) == "SHA-512" {
			return str(hm["content"])
		}
	}
	return ""
}

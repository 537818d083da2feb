package sbom

import (
	"encoding/json"
	"testing"
)

// A go.sum hash is the base64 of a SHA-256; anything else is no hash.
func TestH1HashesAreTheSHA256TheyEncode(t *testing.T) {
	for in, want := range map[string]string{
		"h1:VlbKKnNfV8bJzeqoa4cOKqO6bYr3WgKZxO8Z16+hsOM=": "5656ca2a735f57c6c9cdeaa86b870e2aa3ba6d8af75a0299c4ef19d7afa1b0e3",
		"h1:short": "",
		"h2:VlbKKnNfV8bJzeqoa4cOKqO6bYr3WgKZxO8Z16+hsOM=": "",
		"":        "",
		"h1:!!!!": "",
	} {
		if got := h1SHA256(in); got != want {
			t.Errorf("h1SHA256(%q) = %q, want %q", in, got, want)
		}
	}
}

// The standard library and the main module carry the hash of the binary
// they are compiled into, marked as such; a module whose build information
// holds no go.sum hash (a replaced module) gets none, and an RPM gets the
// digest its database records.
func TestHashesAreWrittenOnlyWhereTheyAreKnown(t *testing.T) {
	const bin = "915886238d55119a7b324be7fb8fbe18360eca9bf932a751dd6cd232d22168bd"
	doc := map[string]any{}
	if err := json.Unmarshal([]byte(`{"metadata":{"component":{"bom-ref":"img","name":"app"},"tools":{"components":[{"name":"reloader-release","author":"anchore"}]}},
	 "components":[
	  {"bom-ref":"f","type":"file","name":"/app","hashes":[{"alg":"SHA-256","content":"`+bin+`"}]},
	  {"bom-ref":"main","type":"library","name":"example.com/app","purl":"pkg:golang/example.com/app","properties":[{"name":"syft:location:0:path","value":"/app"},{"name":"syft:metadata:mainModule","value":"example.com/app"}]},
	  {"bom-ref":"std","type":"library","name":"stdlib","purl":"pkg:golang/stdlib@1.26.8","properties":[{"name":"syft:location:0:path","value":"/app"}]},
	  {"bom-ref":"dep","type":"library","name":"example.com/dep","purl":"pkg:golang/example.com/dep@v1","properties":[{"name":"syft:location:0:path","value":"/app"},{"name":"syft:metadata:h1Digest","value":"h1:VlbKKnNfV8bJzeqoa4cOKqO6bYr3WgKZxO8Z16+hsOM="},{"name":"syft:metadata:mainModule","value":"example.com/app"}]},
	  {"bom-ref":"repl","type":"library","name":"example.com/replaced","purl":"pkg:golang/example.com/replaced@v1","properties":[{"name":"syft:location:0:path","value":"/app"},{"name":"syft:metadata:mainModule","value":"example.com/app"}]},
	  {"bom-ref":"bash","type":"library","name":"bash","purl":"pkg:rpm/redhat/bash@5.1"}],
	 "dependencies":[{"ref":"main","dependsOn":["dep","std","repl"]}]}`), &doc); err != nil {
		t.Fatal(err)
	}
	completeCycloneDX(doc, Options{Producer: "Example project"}, map[string]string{"pkg:rpm/redhat/bash@5.1": "0123456789abcdef0123456789abcdef"})
	hashes := map[string]string{}
	for _, c := range doc["components"].([]any) {
		comp := c.(map[string]any)
		hs, _ := comp["hashes"].([]any)
		for _, h := range hs {
			hm := h.(map[string]any)
			hashes[str(comp["bom-ref"])] = str(hm["alg"]) + ":" + str(hm["content"])
		}
	}
	for ref, want := range map[string]string{
		"main": "SHA-256:" + bin, "std": "SHA-256:" + bin,
		"dep":  "SHA-256:5656ca2a735f57c6c9cdeaa86b870e2aa3ba6d8af75a0299c4ef19d7afa1b0e3",
		"repl": "", "bash": "MD5:0123456789abcdef0123456789abcdef",
	} {
		if hashes[ref] != want {
			t.Errorf("%s: hash %q, want %q", ref, hashes[ref], want)
		}
	}
	md := doc["metadata"].(map[string]any)
	if lc, _ := md["lifecycles"].([]any); len(lc) != 1 || lc[0].(map[string]any)["phase"] != Lifecycle {
		t.Errorf("lifecycles %v, want the %s phase", md["lifecycles"], Lifecycle)
	}
	if tool := md["tools"].(map[string]any)["components"].([]any)[0].(map[string]any); tool["author"] != "Example project" {
		t.Errorf("reloader-release tool authored by %v, want the producer", tool["author"])
	}
	// The image depends on the components nothing else depends on.
	deps := doc["dependencies"].([]any)
	root := deps[len(deps)-1].(map[string]any)
	if root["ref"] != "img" || len(root["dependsOn"].([]any)) != 2 {
		t.Errorf("image dependencies %v, want img on main and bash", root)
	}
}

// The documents completed are syft's output re-read as JSON; whatever
// shape they have, completing them must not panic.
func FuzzComplete(f *testing.F) {
	f.Add([]byte(`{"metadata":{"component":{"bom-ref":"x"},"tools":{"components":[{"name":"reloader-release"}]}},"components":[{"type":"library","purl":"pkg:golang/stdlib@1","properties":[{"name":"syft:location:0:path","value":"/a"}]},{"type":"file","name":"/a","hashes":[{"alg":"SHA-256","content":"ab"}]}],"dependencies":[{"ref":"y","dependsOn":["x"]}]}`))
	f.Add([]byte(`{"creationInfo":{"creators":["Organization: Anchore, Inc"]},"files":[{"SPDXID":"f","checksums":[{"algorithm":"SHA256","checksumValue":"ab"}]}],"packages":[{"SPDXID":"p","externalRefs":[{"referenceType":"purl","referenceLocator":"pkg:golang/stdlib@1"}]}],"relationships":[{"relationshipType":"OTHER","comment":"evident-by: x","spdxElementId":"p","relatedSpdxElement":"f"}]}`))
	f.Add([]byte(`{"metadata":[],"components":{},"packages":[1,null,"x"],"creationInfo":3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var doc map[string]any
		if json.Unmarshal(data, &doc) != nil || doc == nil {
			return
		}
		opts := Options{MainModule: "example.com/app", Producer: "Example project"}
		completeCycloneDX(doc, opts, map[string]string{"pkg:rpm/x@1": "00"})
		completeSPDX(doc, opts, map[string]string{"pkg:rpm/x@1": "00"})
		opts.ProducerURL, opts.Repository = "https://example.com/security", "registry.example/app"
		describeDeployables(doc, opts, deployables{layers: map[string]layerFile{"sha256:l": {Digest: "sha256:b", SHA512: "00"}}, binaries: map[string]string{"/a": "00"}})
	})
}

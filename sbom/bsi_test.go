package sbom

import (
	"encoding/json"
	"strings"
	"testing"
)

// What BSI TR-03183-2 v2.1.0 asks of each component is written from what
// the image holds: the binary a Go module is compiled into, the layer that
// delivers it, the RPM database's entry; the producer's contact as
// declared; and nothing where nothing is known.
func TestBSIFieldsAreWrittenFromTheImageAndTheDeclaredContact(t *testing.T) {
	doc := map[string]any{}
	if err := json.Unmarshal([]byte(`{"metadata":{"component":{"bom-ref":"img"}},
	 "components":[
	  {"bom-ref":"main","type":"library","name":"example.com/app","version":"v1.0.0","purl":"pkg:golang/example.com/app@v1.0.0",
	   "licenses":[{"license":{"id":"Apache-2.0"}}],
	   "properties":[{"name":"syft:location:0:path","value":"/usr/bin/app"},{"name":"syft:location:0:layerID","value":"sha256:d1"}]},
	  {"bom-ref":"dep","type":"library","name":"golang.org/x/sync","version":"v0.24.0","purl":"pkg:golang/golang.org/x/sync@v0.24.0",
	   "licenses":[{"license":{"id":"BSD-3-Clause"}},{"license":{"name":"a custom licence"}}],
	   "properties":[{"name":"syft:location:0:path","value":"/usr/bin/app"},{"name":"syft:location:0:layerID","value":"sha256:d1"}]},
	  {"bom-ref":"bash","type":"library","name":"bash","version":"1:5.1.8-9.el9","purl":"pkg:rpm/redhat/bash@5.1.8-9.el9?arch=x86_64&distro=rhel-9",
	   "supplier":{"name":"Red Hat, Inc."},"licenses":[{"expression":"GPL-3.0-or-later"}],
	   "properties":[{"name":"syft:location:0:layerID","value":"sha256:d0"},{"name":"syft:metadata:sourceRpm","value":"bash-5.1.8-9.el9.src.rpm"}]},
	  {"type":"operating-system","name":"rhel","externalReferences":[{"type":"website","url":"https://www.redhat.com/"},{"type":"issue-tracker","url":"https://issues.redhat.com/"}]}]}`), &doc); err != nil {
		t.Fatal(err)
	}
	dep := deployables{
		layers:   map[string]layerFile{"sha256:d0": {Digest: "sha256:b0", SHA512: "aa"}, "sha256:d1": {Digest: "sha256:b1", SHA512: "bb"}},
		binaries: map[string]string{"/usr/bin/app": "cc"},
	}
	describeDeployables(doc, Options{MainModule: "example.com/app", Producer: "Example", ProducerEmail: "security@example.com",
		SecurityTxt: "https://example.com/security.txt", Repository: "registry.example/org/app", SourceURI: "https://example.com/src/tree/abc"}, dep)
	out, _ := json.Marshal(doc)
	comps := doc["components"].([]any)
	get := func(i int) string { b, _ := json.Marshal(comps[i]); return string(b) }
	for _, tc := range []struct {
		what string
		in   string
		want []string
	}{
		{"the SBOM's creator", string(out), []string{`"manufacturer":{"contact":[{"email":"security@example.com","name":"Example"}],"name":"Example"}`}},
		{"the main module", get(0), []string{
			`"manufacturer":{"contact":[{"email":"security@example.com"`, `{"alg":"SHA-512","content":"cc"}`,
			`{"type":"source-distribution","url":"https://example.com/src/tree/abc"}`, `{"type":"rfc-9116","url":"https://example.com/security.txt"}`,
			`"url":"https://registry.example/v2/org/app/blobs/sha256:b1"`, `"hashes":[{"alg":"SHA-512","content":"bb"}]`,
			`{"name":"bsi:component:filename","value":"app"}`, `{"name":"bsi:component:executable","value":"executable"}`,
			`{"acknowledgement":"concluded","expression":"Apache-2.0"}`, `"acknowledgement":"declared","id":"Apache-2.0"`}},
		{"a dependency", get(1), []string{
			`"manufacturer":{"name":"Go","url":["https://golang.org/x/sync"]}`, `{"name":"reloader.dev:creator-derived","value":"true"}`,
			`"url":"https://proxy.golang.org/golang.org/x/sync/@v/v0.24.0.zip"`}},
		{"an RPM", get(2), []string{
			`{"name":"bsi:component:filename","value":"bash-5.1.8-9.el9.x86_64.rpm"}`, `{"name":"bsi:component:archive","value":"archive"}`,
			`"url":"pkg:rpm/redhat/bash@5.1.8-9.el9?arch=src"`, `"manufacturer":{"name":"Red Hat, Inc.","url":["https://issues.redhat.com/"]}`,
			`"url":"https://registry.example/v2/org/app/blobs/sha256:b0"`, `{"acknowledgement":"concluded","expression":"GPL-3.0-or-later"}`}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.in, w) {
				t.Errorf("%s lacks %s:\n%s", tc.what, w, tc.in)
			}
		}
	}
	// A module binary's hash stays the main module's and the standard
	// library's; a licence that is no SPDX identifier is not concluded.
	if d := get(1); strings.Contains(d, `"SHA-512","content":"cc"`) || strings.Contains(d, `"concluded"`) {
		t.Errorf("the dependency carries the binary's hash or a concluded licence it cannot have: %s", d)
	}
}

func TestSourceRPMPURLNamesTheSourcePackage(t *testing.T) {
	for in, want := range map[[2]string]string{
		{"pkg:rpm/redhat/glibc@2.34-125.el9_5.1?arch=x86_64", "glibc-2.34-125.el9_5.1.src.rpm"}:  "pkg:rpm/redhat/glibc@2.34-125.el9_5.1?arch=src",
		{"pkg:rpm/redhat/python3-libs@3.9.21-1.el9?arch=x86_64", "python3-3.9.21-1.el9.src.rpm"}: "pkg:rpm/redhat/python3@3.9.21-1.el9?arch=src",
		{"pkg:rpm/redhat/x@1-1?arch=x86_64", "x.src.rpm"}:                                        "",
		{"pkg:golang/example.com/a@v1", "a-1-1.src.rpm"}:                                         "",
		{"pkg:rpm/bash@5", "bash-5-1.src.rpm"}:                                                   "",
	} {
		if got := sourceRPMPURL(in[0], in[1]); got != want {
			t.Errorf("sourceRPMPURL(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

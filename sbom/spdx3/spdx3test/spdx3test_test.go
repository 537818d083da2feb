package spdx3test_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/sbom/spdx3/spdx3test"
)

// The validator passes the SPDX 3 library's own example document and refuses
// it once one value breaks the model: an enumeration member that does not
// exist, and a required property removed. A validator that cannot fail would
// vouch for every SBOM.
func TestTheValidatorRefusesADocumentTheModelDoesNotAllow(t *testing.T) {
	example := libraryExample(t)
	v, err := spdx3test.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(example); err != nil {
		t.Fatalf("the library's example document: %v", err)
	}
	for name, broken := range map[string]string{
		"an unknown purpose":       strings.Replace(string(example), `"software_primaryPurpose": "executable"`, `"software_primaryPurpose": "bogus"`, 1),
		"no specVersion":           strings.Replace(string(example), `"specVersion": "3.0.1",`, ``, 1),
		"not a JSON-LD SPDX graph": `{"@context": "https://spdx.org/rdf/3.0.1/spdx-context.jsonld", "@graph": []}`,
	} {
		if broken == string(example) {
			t.Fatalf("%s: the example changed; the replacement no longer applies", name)
		}
		if err := v.Validate([]byte(broken)); err == nil {
			t.Errorf("%s: validated", name)
		}
	}
}

func libraryExample(t *testing.T) []byte {
	t.Helper()
	dir := moduleDir(t, "github.com/spdx/tools-golang")
	b, err := os.ReadFile(filepath.Join(dir, "spdx", "v3", "v3_0", "testdata", "test.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func moduleDir(t *testing.T, path string) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", path).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", path, err)
	}
	return strings.TrimSpace(string(out))
}

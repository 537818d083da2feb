package sbom

import "testing"

// The supplier of a Go module is the organisation its path names.
func TestModuleSupplierDerivesTheOrganisationFromThePath(t *testing.T) {
	for path, want := range map[string]string{
		"github.com/spf13/cobra":           "spf13",
		"gitlab.com/org/project/sub":       "org",
		"golang.org/x/crypto":              "Go",
		"k8s.io/client-go":                 "Kubernetes",
		"sigs.k8s.io/yaml":                 "Kubernetes SIGs",
		"go.opentelemetry.io/otel":         "OpenTelemetry",
		"google.golang.org/protobuf":       "Google",
		"gopkg.in/yaml.v3":                 "go-yaml",
		"gopkg.in/natefinch/lumberjack.v2": "natefinch",
		"example.org/some/module":          "example.org",
		"github.com":                       "github.com",
		"":                                 "",
	} {
		if got := ModuleSupplier(path); got != want {
			t.Errorf("ModuleSupplier(%q) = %q, want %q", path, got, want)
		}
	}
}

// Our own module is declared by its producer; every other module's supplier
// is marked as derived, in each format's own fields.
func TestSuppliersAreWrittenAndDerivedOnesMarked(t *testing.T) {
	opts := Options{MainModule: "github.com/reloader-dev/reloader", Producer: "Reloader project"}
	spdx := map[string]any{"packages": []any{
		map[string]any{"supplier": "NOASSERTION", "externalRefs": []any{map[string]any{"referenceType": "purl", "referenceLocator": "pkg:golang/github.com/spf13/cobra@v1.8.0"}}},
		map[string]any{"externalRefs": []any{map[string]any{"referenceType": "purl", "referenceLocator": "pkg:golang/github.com/reloader-dev/reloader@(devel)"}}},
		map[string]any{"supplier": "Organization: Red Hat, Inc.", "externalRefs": []any{map[string]any{"referenceType": "purl", "referenceLocator": "pkg:rpm/redhat/bash@5.1"}}},
	}}
	supplySPDX(spdx, opts)
	pkgs := spdx["packages"].([]any)
	for i, want := range []struct{ supplier, comment string }{
		{"Organization: spf13", DerivedComment},
		{"Organization: Reloader project", ""},
		{"Organization: Red Hat, Inc.", ""},
	} {
		p := pkgs[i].(map[string]any)
		if p["supplier"] != want.supplier || str(p["comment"]) != want.comment {
			t.Errorf("SPDX package %d: supplier %v comment %v, want %q %q", i, p["supplier"], p["comment"], want.supplier, want.comment)
		}
	}

	cdx := map[string]any{"components": []any{
		map[string]any{"purl": "pkg:golang/golang.org/x/crypto@v0.1.0"},
		map[string]any{"purl": "pkg:golang/github.com/reloader-dev/reloader/cmd/mirror@v1"},
		map[string]any{"purl": "pkg:rpm/redhat/glibc@2.34", "publisher": "Red Hat, Inc."},
	}}
	supplyCycloneDX(cdx, opts)
	comps := cdx["components"].([]any)
	for i, want := range []struct {
		supplier string
		derived  bool
	}{{"Go", true}, {"Reloader project", false}, {"Red Hat, Inc.", false}} {
		c := comps[i].(map[string]any)
		sup, _ := c["supplier"].(map[string]any)
		derived := false
		props, _ := c["properties"].([]any)
		for _, p := range props {
			if pm := p.(map[string]any); pm["name"] == DerivedProperty && pm["value"] == "true" {
				derived = true
			}
		}
		if sup == nil || sup["name"] != want.supplier || derived != want.derived {
			t.Errorf("CycloneDX component %d: supplier %v derived %v, want %q %v", i, sup, derived, want.supplier, want.derived)
		}
	}
}

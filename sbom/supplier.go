package sbom

import (
	"strings"
)

// Supplier properties written into the documents. A supplier derived from a
// module path is a guess about who publishes the module, not a declaration
// by them; the SBOM says so in its own fields so no reader mistakes one for
// the other.
const (
	// DerivedComment is the SPDX package comment of a derived supplier.
	DerivedComment = "supplier derived from the module path"
	// DerivedProperty is the CycloneDX component property of a derived
	// supplier, valued "true".
	DerivedProperty = "reloader.dev:supplier-derived"
)

// hostSuppliers names the organisation behind module hosts whose paths do
// not carry it (vanity import paths).
var hostSuppliers = map[string]string{
	"golang.org":          "Go",
	"stdlib":              "Go", // pkg:golang/stdlib, the standard library
	"k8s.io":              "Kubernetes",
	"sigs.k8s.io":         "Kubernetes SIGs",
	"go.opentelemetry.io": "OpenTelemetry",
	"google.golang.org":   "Google",
	"cloud.google.com":    "Google",
	"go.uber.org":         "Uber",
	"go.etcd.io":          "etcd",
	"modernc.org":         "modernc.org",
}

// orgHosts are hosting services whose second path element is the owning
// organisation.
var orgHosts = map[string]bool{
	"github.com":    true,
	"gitlab.com":    true,
	"bitbucket.org": true,
	"codeberg.org":  true,
}

// ModuleSupplier derives the supplier of a Go module from its path: the
// organisation on a hosting service, a known vanity host's project, or else
// the host itself. It returns "" for an empty path.
func ModuleSupplier(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	host := parts[0]
	if host == "" {
		return ""
	}
	if orgHosts[host] && len(parts) > 1 && parts[1] != "" {
		return parts[1]
	}
	if host == "gopkg.in" && len(parts) > 1 {
		// gopkg.in/<org>/<pkg>.vN is github.com/<org>/<pkg>;
		// gopkg.in/<pkg>.vN is github.com/go-<pkg>/<pkg>.
		if len(parts) > 2 {
			return parts[1]
		}
		pkg := parts[1]
		if i := strings.Index(pkg, ".v"); i > 0 {
			pkg = pkg[:i]
		}
		return "go-" + pkg
	}
	if s, ok := hostSuppliers[host]; ok {
		return s
	}
	return host
}

// goModulePath returns the module path of a pkg:golang PURL, "" for any
// other PURL.
func goModulePath(purl string) string {
	rest, ok := strings.CutPrefix(purl, "pkg:golang/")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "@?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// supplierFor says who supplies the component with this PURL: the producer
// for the main module (declared), the derived organisation for other Go
// modules. ok is false for components this package does not name a
// supplier for (RPMs carry their vendor).
func supplierFor(purl string, opts Options) (name string, derived, ok bool) {
	mod := goModulePath(purl)
	if mod == "" {
		return "", false, false
	}
	if opts.MainModule != "" && opts.Producer != "" && (mod == opts.MainModule || strings.HasPrefix(mod, opts.MainModule+"/")) {
		return opts.Producer, false, true
	}
	if s := ModuleSupplier(mod); s != "" {
		return s, true, true
	}
	return "", false, false
}

// rpmVendor names the supplier of an RPM from its PURL's vendor namespace
// (pkg:rpm/redhat/...) when the document carries none.
func rpmVendor(purl string) string {
	rest, ok := strings.CutPrefix(purl, "pkg:rpm/")
	if !ok {
		return ""
	}
	ns, _, found := strings.Cut(rest, "/")
	if !found {
		return ""
	}
	if ns == "redhat" {
		return "Red Hat, Inc."
	}
	return ns
}

// supplySPDX names the supplier of every SPDX package it can.
func supplySPDX(doc map[string]any, opts Options) {
	pkgs, _ := doc["packages"].([]any)
	for _, p := range pkgs {
		pkg, ok := p.(map[string]any)
		if !ok {
			continue
		}
		purl := ""
		refs, _ := pkg["externalRefs"].([]any)
		for _, r := range refs {
			if ref, ok := r.(map[string]any); ok && strings.EqualFold(str(ref["referenceType"]), "purl") {
				purl = str(ref["referenceLocator"])
			}
		}
		if s := str(pkg["supplier"]); s != "" && s != "NOASSERTION" {
			continue
		}
		if name, derived, ok := supplierFor(purl, opts); ok {
			pkg["supplier"] = "Organization: " + name
			if derived {
				pkg["comment"] = DerivedComment
			}
		} else if v := rpmVendor(purl); v != "" {
			pkg["supplier"] = "Organization: " + v
		}
	}
}

// supplyCycloneDX names the supplier of every CycloneDX component it can,
// and the producer as the SBOM's author: syft names only itself, a tool,
// which is not an author.
func supplyCycloneDX(doc map[string]any, opts Options) {
	if md, ok := doc["metadata"].(map[string]any); ok && opts.Producer != "" {
		if a, _ := md["authors"].([]any); len(a) == 0 {
			md["authors"] = []any{map[string]any{"name": opts.Producer}}
		}
	}
	comps, _ := doc["components"].([]any)
	for _, c := range comps {
		comp, ok := c.(map[string]any)
		if !ok {
			continue
		}
		if sup, ok := comp["supplier"].(map[string]any); ok && str(sup["name"]) != "" {
			continue
		}
		purl := str(comp["purl"])
		if name, derived, ok := supplierFor(purl, opts); ok {
			comp["supplier"] = map[string]any{"name": name}
			if derived {
				props, _ := comp["properties"].([]any)
				comp["properties"] = append(props, map[string]any{"name": DerivedProperty, "value": "true"})
			}
			continue
		}
		// syft records an RPM's vendor as the publisher; CycloneDX's
		// supplier is where a review looks for it.
		v := str(comp["publisher"])
		if v == "" {
			v = rpmVendor(purl)
		}
		if v != "" {
			comp["supplier"] = map[string]any{"name": v}
		}
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

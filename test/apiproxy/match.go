package apiproxy

import (
	"net/http"
	"strings"
)

// Matcher tells whether a request is one a hold (or a count) is about. It is
// given the request as the client sent it; it must not read the body.
type Matcher func(*http.Request) bool

// Resource matches every request for the resource plural ("configmaps",
// "deployments"), in any API group and version, namespaced or across all
// namespaces: list, get, watch and writes, and its subresources
// (configmaps/x/status is a ConfigMap request). Discovery, other resources
// and non-API paths do not match.
func Resource(plural string) Matcher {
	return func(r *http.Request) bool {
		res, ok := resourceOf(r.URL.Path)
		return ok && res == plural
	}
}

// Writes matches every request that may change something: all methods but
// GET and HEAD.
func Writes() Matcher {
	return func(r *http.Request) bool {
		return r.Method != http.MethodGet && r.Method != http.MethodHead
	}
}

// namespaceSubresources are the names that follow /namespaces/<name>/ as a
// subresource of the Namespace rather than as a namespaced resource; the
// apiserver's RequestInfoFactory reads the path the same way.
var namespaceSubresources = map[string]bool{"status": true, "finalize": true}

// resourceOf reads the resource from a Kubernetes API path, as the apiserver
// does (k8s.io/apiserver's RequestInfoFactory, not imported: it would pull
// the apiserver into every test that uses the proxy):
//
//	/api/<version>/[watch/][namespaces/<ns>/]<resource>[/<name>[/<subresource>...]]
//	/apis/<group>/<version>/[watch/][namespaces/<ns>/]<resource>[/<name>...]
//
// ok is false for anything else (discovery, /healthz, /openapi/...).
func resourceOf(path string) (resource string, ok bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return "", false
	}
	// The deprecated /watch/ prefix is still served.
	if parts[0] == "watch" {
		parts = parts[1:]
	}
	if len(parts) >= 3 && parts[0] == "namespaces" && !namespaceSubresources[parts[2]] {
		parts = parts[2:]
	}
	if len(parts) == 0 || parts[0] == "" {
		return "", false
	}
	return parts[0], true
}

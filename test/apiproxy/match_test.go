package apiproxy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/reloader-dev/reloader/test/apiproxy"
)

// Resource reads the path as the apiserver does: it names exactly one
// resource, in the core or a named group, namespaced or across namespaces,
// for list, get, watch and subresources; a name or a namespace that happens
// to spell a resource is not that resource.
func TestResourceMatchesExactlyTheResourceOfThePath(t *testing.T) {
	for _, tc := range []struct {
		resource, path string
		want           bool
	}{
		{"configmaps", "/api/v1/namespaces/ns1/configmaps?watch=true", true},
		{"configmaps", "/api/v1/configmaps", true},
		{"configmaps", "/api/v1/configmaps?watch=1&resourceVersion=7", true},
		{"configmaps", "/api/v1/namespaces/ns1/configmaps/app", true},
		{"configmaps", "/api/v1/namespaces/ns1/configmaps/app/status", true},
		{"configmaps", "/api/v1/watch/namespaces/ns1/configmaps", true},
		{"configmaps", "/api/v1/namespaces/ns1/configmapsfoo", false},
		{"configmaps", "/api/v1/configmapsfoo", false},
		{"configmaps", "/api/v1/namespaces/configmaps", false},
		{"configmaps", "/api/v1/namespaces/configmaps/secrets", false},
		{"configmaps", "/api/v1/namespaces/ns1/secrets/configmaps", false},
		{"configmaps", "/apis/configmaps/v1/widgets", false},
		{"configmaps", "/api/v1", false},
		{"configmaps", "/api", false},
		{"configmaps", "/healthz", false},
		{"configmaps", "/openapi/v2", false},
		{"deployments", "/apis/apps/v1/namespaces/x/deployments/name", true},
		{"deployments", "/apis/apps/v1/deployments?watch=true", true},
		{"deployments", "/apis/apps/v1/namespaces/x/deployments/name/scale", true},
		{"deployments", "/apis/apps/v1", false},
		{"deployments", "/apis/apps/v1/namespaces/x/replicasets", false},
		{"namespaces", "/api/v1/namespaces", true},
		{"namespaces", "/api/v1/namespaces/ns1", true},
		{"namespaces", "/api/v1/namespaces/ns1/status", true},
		{"namespaces", "/api/v1/namespaces/ns1/finalize", true},
		{"namespaces", "/api/v1/namespaces/ns1/configmaps", false},
	} {
		r := httptest.NewRequest(http.MethodGet, tc.path, nil)
		if got := apiproxy.Resource(tc.resource)(r); got != tc.want {
			t.Errorf("Resource(%q) on %s = %v; want %v", tc.resource, tc.path, got, tc.want)
		}
	}
}

// Writes is every method that may change something: all but GET and HEAD.
func TestWritesMatchesEveryMethodButGetAndHead(t *testing.T) {
	for method, want := range map[string]bool{
		http.MethodGet: false, http.MethodHead: false,
		http.MethodPost: true, http.MethodPut: true, http.MethodPatch: true, http.MethodDelete: true,
	} {
		r := httptest.NewRequest(method, "/api/v1/namespaces/ns1/configmaps/app", nil)
		if got := apiproxy.Writes()(r); got != want {
			t.Errorf("Writes() on %s = %v; want %v", method, got, want)
		}
	}
}

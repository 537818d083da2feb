package keyless

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestGitHubIDTokenAsksForTheSigstoreAudience(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer request-token" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		if r.URL.Query().Get("audience") != "sigstore" || r.URL.Query().Get("api-version") != "2.0" {
			http.Error(w, "wrong query "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(`{"value":"the.oidc.token"}`))
	}))
	defer srv.Close()
	t.Setenv("ACTIONS_ID_TOKEN_REQUEST_URL", srv.URL+"/token?api-version=2.0")
	t.Setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "request-token")
	tok, err := GitHubIDToken(context.Background(), srv.Client())
	if err != nil || tok != "the.oidc.token" {
		t.Fatalf("token %q, %v", tok, err)
	}
}

func TestGitHubIDTokenExplainsAMissingPermission(t *testing.T) {
	t.Setenv("ACTIONS_ID_TOKEN_REQUEST_URL", "")
	t.Setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "")
	if _, err := GitHubIDToken(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "id-token: write") {
		t.Fatalf("error %v does not point at the permission", err)
	}
}

package registry

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// The issuer grants the requested scopes a user holds and drops the rest,
// without failing the request, as the Docker token protocol (and Harbor)
// do; a wrong password is refused outright.
func TestTokenIssuerGrantsOnlyHeldScopes(t *testing.T) {
	ti, err := NewTokenIssuer(TokenIssuerOptions{Users: map[string]User{
		"mirror": {Password: "pw", Grants: []Grant{{Repository: "src/*", Actions: []string{"pull"}}, {Repository: "dst/*", Actions: []string{"pull", "push"}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ti)
	t.Cleanup(srv.Close)

	get := func(user, pass string, scopes ...string) (*http.Response, map[string]any) {
		t.Helper()
		q := url.Values{"service": {ti.Service}, "scope": scopes}
		req, err := http.NewRequest(http.MethodGet, srv.URL+TokenPath+"?"+q.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp, body
	}

	resp, body := get("mirror", "pw", "repository:src/app:pull,push", "repository:dst/app:pull,push repository:other/app:pull")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token request: %s", resp.Status)
	}
	claims := decodeClaims(t, body["token"].(string))
	got := map[string][]string{}
	for _, a := range claims.Access {
		got[a.Name] = a.Actions
	}
	want := map[string][]string{"src/app": {"pull"}, "dst/app": {"pull", "push"}}
	if len(got) != len(want) || !slices.Equal(got["src/app"], want["src/app"]) || !slices.Equal(got["dst/app"], want["dst/app"]) {
		t.Fatalf("token grants %v, want %v", got, want)
	}
	if claims.Aud != ti.Service || claims.Iss != ti.Issuer || claims.Sub != "mirror" {
		t.Fatalf("token claims iss=%q aud=%q sub=%q", claims.Iss, claims.Aud, claims.Sub)
	}

	if resp, _ := get("mirror", "wrong", "repository:src/app:pull"); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong password: %s, want 401", resp.Status)
	}
	resp, body = get("", "", "repository:src/app:pull")
	if resp.StatusCode != http.StatusOK || len(decodeClaims(t, body["token"].(string)).Access) != 0 {
		t.Fatalf("anonymous request: %s %v, want a token granting nothing", resp.Status, body)
	}
}

type testClaims struct {
	Iss, Sub string
	Aud      string
	Access   []resourceActions
}

func decodeClaims(t *testing.T, tok string) testClaims {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a compact JWS", tok)
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c testClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatalf("token payload %s: %v", payload, err)
	}
	return c
}

func FuzzParseScope(f *testing.F) {
	for _, s := range []string{"repository:a/b:pull,push", "registry:catalog:*", "repository(plugin):x:pull", "", ":", "a::", "::b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ra, ok := parseScope(s)
		if !ok {
			return
		}
		if back := ra.Type + ":" + ra.Name + ":" + strings.Join(ra.Actions, ","); back != s {
			t.Fatalf("parseScope(%q) = %+v, which reads back as %q", s, ra, back)
		}
	})
}

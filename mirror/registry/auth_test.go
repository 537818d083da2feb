package registry_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/mirror/registry"
	testregistry "github.com/reloader-dev/reloader/test/registry"
)

// The mirror's rights on a Harbor-like registry: it reads the source project
// and writes the target project, nothing else.
var harborUsers = map[string]testregistry.User{
	"mirror": {Password: "mirror-pass", Grants: []testregistry.Grant{
		{Repository: "src/*", Actions: []string{"pull"}},
		{Repository: "dst/*", Actions: []string{"pull", "push"}},
	}},
	// pusher may write dst/fresh only: it cannot read dst/app, so it
	// cannot mount blobs from there.
	"pusher": {Password: "pusher-pass", Grants: []testregistry.Grant{
		{Repository: "dst/fresh", Actions: []string{"pull", "push"}},
	}},
	"admin": {Password: "admin-pass", Catalog: true, Grants: []testregistry.Grant{{Repository: "*", Actions: []string{"*"}}}},
}

func startTokenRegistry(t *testing.T, ctx context.Context) (*testregistry.Registry, *testregistry.TokenIssuer) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the distribution registry")
	}
	ti, err := testregistry.NewTokenIssuer(testregistry.TokenIssuerOptions{Users: harborUsers})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := testregistry.StartDistributionWith(ctx, t.TempDir(), testregistry.DistributionOptions{Token: ti})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Stop() })
	return reg, ti
}

// useDockerConfig points DOCKER_CONFIG at a fresh config.json holding
// logins, as a user's `docker login` would have left it.
func useDockerConfig(t *testing.T, logins map[string]testregistry.Credential) {
	t.Helper()
	dir := t.TempDir()
	if err := testregistry.WriteDockerConfig(dir, logins); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
}

// newClient builds the mirror's client as the CLI does: no keychain given,
// so credentials come from the Docker config.
func newClient(t *testing.T) *registry.Client {
	t.Helper()
	c, err := registry.New(registry.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func repository(t *testing.T, ctx context.Context, c *registry.Client, repo string, push bool) *registry.Repository {
	t.Helper()
	r, err := c.Repository(ctx, repo, push)
	if err != nil {
		t.Fatalf("opening %s (push=%t): %v", repo, push, err)
	}
	return r
}

// seed pushes a small image to repo as the admin and returns it.
func seed(t *testing.T, ctx context.Context, repo string) v1.Image {
	t.Helper()
	img, err := random.Image(512, 2)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewTag(repo+":v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	admin := authn.FromConfig(authn.AuthConfig{Username: "admin", Password: "admin-pass"})
	if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithAuth(admin)); err != nil {
		t.Fatalf("seeding %s: %v", ref, err)
	}
	return img
}

// copyImage moves img's blobs and manifest from src to dst with the client's
// primitives, the way the mirror does.
func copyImage(ctx context.Context, src, dst *registry.Repository, img v1.Image) error {
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	for _, d := range append([]v1.Descriptor{m.Config}, m.Layers...) {
		rc, size, err := src.GetBlob(ctx, d.Digest.String())
		if err != nil {
			return err
		}
		err = dst.PushBlob(ctx, d.Digest.String(), size, rc)
		rc.Close()
		if err != nil {
			return err
		}
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	raw, mt, err := src.GetManifest(ctx, d.String())
	if err != nil {
		return err
	}
	_, err = dst.PutManifest(ctx, d.String(), mt, raw)
	return err
}

func wantDenied(t *testing.T, err error, repo, right, user string, rejected bool) {
	t.Helper()
	var de *registry.DeniedError
	if !errors.As(err, &de) {
		t.Fatalf("got %v, want a DeniedError for %s on %s", err, right, repo)
	}
	if de.Repository != repo || de.Right != right || de.User != user || de.Rejected != rejected {
		t.Fatalf("denied %s on %s to %q (credentials rejected: %t), want %s on %s to %q (%t): %v", de.Right, de.Repository, de.User, de.Rejected, right, repo, user, rejected, err)
	}
	for _, s := range []string{repo, right} {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("error %q does not name %q", err, s)
		}
	}
	t.Logf("denied as expected: %v", err)
	if registry.Temporary(err) {
		t.Fatalf("a denial is reported as temporary, so it would be retried: %v", err)
	}
}

// Against distribution with `auth: token`, credentials come from the Docker
// config, and the token service's scopes are what the registry enforces:
// pull on the source, push and pull on the target, and a denial names the
// repository and the missing right.
func TestTokenAuthEnforcesRepositoryScopes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	reg, ti := startTokenRegistry(t, ctx)
	img := seed(t, ctx, reg.Host+"/src/app")
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	useDockerConfig(t, map[string]testregistry.Credential{reg.Host: {Username: "mirror", Password: "mirror-pass"}})
	c := newClient(t)

	t.Run("pull on the source and push on the target copy an image", func(t *testing.T) {
		src := repository(t, ctx, c, reg.Host+"/src/app", false)
		dst := repository(t, ctx, c, reg.Host+"/dst/app", true)
		if err := copyImage(ctx, src, dst, img); err != nil {
			t.Fatalf("copying src/app to dst/app as mirror: %v", err)
		}
		if _, ok, err := dst.HeadManifest(ctx, digest.String()); err != nil || !ok {
			t.Fatalf("dst/app@%s after the copy: present=%t, %v", digest, ok, err)
		}
	})

	t.Run("push where only pull is granted is denied, naming the repository and right", func(t *testing.T) {
		r := repository(t, ctx, c, reg.Host+"/src/other", true)
		err := r.PushBlob(ctx, registry.Digest([]byte("x")), 1, strings.NewReader("x"))
		wantDenied(t, err, "src/other", "push", "mirror", false)
		if !strings.Contains(err.Error(), "lacks the push right on src/other") {
			t.Fatalf("error %q does not name the missing right", err)
		}
	})

	t.Run("pull outside the grants is denied, naming the repository and right", func(t *testing.T) {
		r := repository(t, ctx, c, reg.Host+"/secret/app", false)
		_, _, err := r.GetManifest(ctx, digest.String())
		wantDenied(t, err, "secret/app", "pull", "mirror", false)
	})

	t.Run("a cross-repository mount asks for pull on the mount source", func(t *testing.T) {
		dst := repository(t, ctx, c, reg.Host+"/dst/copy", true)
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		ld, err := layers[0].Digest()
		if err != nil {
			t.Fatal(err)
		}
		before := len(ti.Requests())
		mounted, err := dst.MountBlob(ctx, ld.String(), "dst/app")
		if err != nil || !mounted {
			t.Fatalf("mounting %s from dst/app into dst/copy: mounted=%t, %v", ld, mounted, err)
		}
		if !granted(ti.Requests()[before:], "mirror", "repository:dst/app:pull") {
			t.Fatalf("no token granted pull on the mount source; requests: %+v", ti.Requests()[before:])
		}
	})
}

// A user who may push to the target but not read the mount source gets the
// mount refused by the registry; the client takes that as a decline and the
// upload that follows succeeds.
func TestMountWithoutPullOnTheSourceFallsBackToUpload(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	reg, ti := startTokenRegistry(t, ctx)
	img := seed(t, ctx, reg.Host+"/dst/app")
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	ld, err := layers[0].Digest()
	if err != nil {
		t.Fatal(err)
	}
	useDockerConfig(t, map[string]testregistry.Credential{reg.Host: {Username: "pusher", Password: "pusher-pass"}})
	dst := repository(t, ctx, newClient(t), reg.Host+"/dst/fresh", true)

	mounted, err := dst.MountBlob(ctx, ld.String(), "dst/app")
	if err != nil || mounted {
		t.Fatalf("mount from dst/app without pull on it: mounted=%t, %v; want a decline", mounted, err)
	}
	reqs := ti.Requests()
	if granted(reqs, "pusher", "repository:dst/app:pull") {
		t.Fatalf("the token service granted pusher pull on dst/app: %+v", reqs)
	}
	if !requested(reqs, "pusher", "repository:dst/app:pull") {
		t.Fatalf("the client never asked for pull on the mount source: %+v", reqs)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	size, err := layers[0].Size()
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.PushBlob(ctx, ld.String(), size, rc); err != nil {
		t.Fatalf("uploading after the declined mount: %v", err)
	}
	if got, ok, err := dst.HeadBlob(ctx, ld.String()); err != nil || !ok || got != size {
		t.Fatalf("dst/fresh blob after upload: size %d present=%t, %v", got, ok, err)
	}
}

// Credentials the token service rejects, and no credentials at all, fail
// with a DeniedError that says which it was.
func TestTokenAuthWithoutValidCredentials(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	reg, _ := startTokenRegistry(t, ctx)
	img := seed(t, ctx, reg.Host+"/src/app")
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("wrong password", func(t *testing.T) {
		useDockerConfig(t, map[string]testregistry.Credential{reg.Host: {Username: "mirror", Password: "wrong"}})
		_, err := newClient(t).Repository(ctx, reg.Host+"/src/app", false)
		wantDenied(t, err, "src/app", "pull", "mirror", true)
		if !strings.Contains(err.Error(), "token service refused them") {
			t.Fatalf("error %q does not say the credentials were refused", err)
		}
	})
	t.Run("no login for the registry", func(t *testing.T) {
		useDockerConfig(t, map[string]testregistry.Credential{"elsewhere.example": {Username: "mirror", Password: "mirror-pass"}})
		r := repository(t, ctx, newClient(t), reg.Host+"/src/app", false)
		_, _, err := r.GetManifest(ctx, digest.String())
		wantDenied(t, err, "src/app", "pull", "", false)
		if !strings.Contains(err.Error(), "DOCKER_CONFIG") {
			t.Fatalf("error %q does not say where credentials are read from", err)
		}
	})
}

// Against distribution with `auth: htpasswd` (basic auth, as Artifactory and
// Nexus take it), the Docker config's login is sent and a wrong one is refused.
func TestHtpasswdBasicAuth(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the distribution registry")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	reg, err := testregistry.StartDistributionWith(ctx, t.TempDir(), testregistry.DistributionOptions{
		Htpasswd: map[string]string{"mirror": "mirror-pass"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Stop() })
	blob := []byte("a blob pushed with basic auth")

	t.Run("the Docker config's login pushes and pulls", func(t *testing.T) {
		useDockerConfig(t, map[string]testregistry.Credential{reg.Host: {Username: "mirror", Password: "mirror-pass"}})
		r := repository(t, ctx, newClient(t), reg.Host+"/team/app", true)
		if err := r.PushBlob(ctx, registry.Digest(blob), int64(len(blob)), bytes.NewReader(blob)); err != nil {
			t.Fatalf("pushing with basic auth: %v", err)
		}
		if _, ok, err := r.HeadBlob(ctx, registry.Digest(blob)); err != nil || !ok {
			t.Fatalf("reading back with basic auth: present=%t, %v", ok, err)
		}
	})
	t.Run("a wrong password is denied", func(t *testing.T) {
		useDockerConfig(t, map[string]testregistry.Credential{reg.Host: {Username: "mirror", Password: "wrong"}})
		r := repository(t, ctx, newClient(t), reg.Host+"/team/app", false)
		_, _, err := r.HeadBlob(ctx, registry.Digest(blob))
		wantDenied(t, err, "team/app", "pull", "mirror", true)
	})
	t.Run("no login is denied", func(t *testing.T) {
		useDockerConfig(t, nil)
		r := repository(t, ctx, newClient(t), reg.Host+"/team/app", true)
		err := r.PushBlob(ctx, registry.Digest(blob), int64(len(blob)), bytes.NewReader(blob))
		wantDenied(t, err, "team/app", "push", "", false)
	})
}

func granted(reqs []testregistry.TokenRequest, user, scope string) bool {
	return slices.ContainsFunc(reqs, func(r testregistry.TokenRequest) bool {
		return r.User == user && slices.Contains(r.Granted, scope)
	})
}

func requested(reqs []testregistry.TokenRequest, user, scope string) bool {
	return slices.ContainsFunc(reqs, func(r testregistry.TokenRequest) bool {
		return r.User == user && slices.Contains(r.Requested, scope)
	})
}

// Artifactory and Harbor's core answer 403 for a user without the right;
// that is a denial too, not a missing object and not worth a retry.
func TestForbiddenIsADenial(t *testing.T) {
	ctx := context.Background()
	reg, err := testregistry.StartInProcess(testregistry.InProcessOptions{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost || r.Method == http.MethodPut {
				http.Error(w, `{"errors":[{"status":403,"message":"Not enough permissions to deploy"}]}`, http.StatusForbidden)
				return
			}
			h.ServeHTTP(w, r)
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Stop() })
	useDockerConfig(t, map[string]testregistry.Credential{reg.Host: {Username: "deployer", Password: "pw"}})
	r := repository(t, ctx, newClient(t), reg.Host+"/libs/app", true)
	err = r.PushBlob(ctx, registry.Digest([]byte("x")), 1, strings.NewReader("x"))
	wantDenied(t, err, "libs/app", "push", "deployer", false)
}

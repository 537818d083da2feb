package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
	testregistry "github.com/reloader-dev/reloader/test/registry"
)

// copy into a Harbor-like registry (distribution with token auth) with the
// credentials a user's Docker config holds: a user with push on the project
// copies the release, tag fallback included; one with only pull is refused
// with the repository and the missing right named.
func TestCopyIntoTokenAuthRegistryWithDockerConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the distribution registry")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	src := startRegistry(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "cosign.pub")
	if err := os.WriteFile(key, s.PublicKeyPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	ti, err := testregistry.NewTokenIssuer(testregistry.TokenIssuerOptions{Users: map[string]testregistry.User{
		"robot$mirror": {Password: "pw", Grants: []testregistry.Grant{{Repository: "platform/*", Actions: []string{"pull", "push"}}}},
		"reader":       {Password: "pw", Grants: []testregistry.Grant{{Repository: "platform/*", Actions: []string{"pull"}}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	harbor, err := testregistry.StartDistributionWith(ctx, t.TempDir(), testregistry.DistributionOptions{Token: ti})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = harbor.Stop() })
	target := harbor.Host + "/platform/reloader"
	login := func(user string) {
		d := filepath.Join(t.TempDir(), user)
		if err := testregistry.WriteDockerConfig(d, map[string]testregistry.Credential{harbor.Host: {Username: user, Password: "pw"}}); err != nil {
			t.Fatal(err)
		}
		t.Setenv("DOCKER_CONFIG", d)
	}

	login("reader")
	code, _, errs := runCLI(t, "copy", "--lock-ref", rel.LockRef, "--key", key, "--allow-unscanned", "--target", target)
	if code == cli.ExitOK || !strings.Contains(errs, "platform/reloader") || !strings.Contains(errs, "push right") {
		t.Fatalf("copy as a pull-only user: exit %d: %s; want a refusal naming the repository and the push right", code, errs)
	}

	login("robot$mirror")
	if code, _, errs := runCLI(t, "copy", "--lock-ref", rel.LockRef, "--key", key, "--allow-unscanned", "--target", target); code != cli.ExitOK {
		t.Fatalf("copy as robot$mirror: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, "verify", "--lock-ref", target+"/reloader-release:v1.2.3", "--key", key, "--allow-unscanned", "--target", target); code != cli.ExitOK {
		t.Fatalf("verify at the token-auth target: exit %d: %s", code, errs)
	}
}

package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/test/tools"
)

// cosign v2 (v2.6.5) switches to the bundle format as soon as a subject has
// any Sigstore bundle referrer, and then wants a trusted root even with
// --key: offline, the versions page's key command fails on a release in both
// forms (reloader-release publish's default) or in bundles only. Given a
// trusted root with nothing in it (the key is the only trust anchor, so it
// adds none), v2 verifies the bundles with the key. This pins what a v2
// user must be told; cosign v3 needs no trusted root (see
// TestAReleaseInBothFormsKeepsBothAtTheTarget).
func TestCosignV2NeedsATrustedRootForAKeyReleaseWithBundles(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("publishes a release and runs the cosign CLI")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	src := startRegistry(t)
	kr := publishFormatRelease(t, ctx, src.Host, 44, sign.FormatBoth)
	cosign := offlineCosign(t, ctx, tools.Clients)
	empty := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(empty, []byte(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	index := kr.rel.Lock.Artifacts[slices.IndexFunc(kr.rel.Lock.Artifacts, func(a release.Artifact) bool { return a.Kind == release.KindImageIndex })]
	ref := index.Repository + "@" + index.Digest
	page := []string{"verify", "--key", kr.pub, "--insecure-ignore-tlog=true"}
	var refused *cosignError
	if err := cosign(append(page, ref)...); !errors.As(err, &refused) || !strings.Contains(refused.out, "trusted root is required") {
		t.Errorf("cosign v2 ran the page's command on a release with bundles offline: %v, want it to ask for a trusted root", err)
	}
	for _, args := range [][]string{
		append(page, "--trusted-root", empty, ref),
		{"verify-attestation", "--type", "spdxjson", "--key", kr.pub, "--insecure-ignore-tlog=true", "--trusted-root", empty, ref},
	} {
		if err := cosign(args...); err != nil {
			t.Errorf("cosign v2: %v", err)
		}
	}
}

// The versions page of a key release in both forms (publish's default) says
// what both cosign majors need: its key commands name the empty
// trusted_root.json written beside the page, so cosign v2 and v3 run every
// command on it as written, at the release registry and on a mirrored copy,
// offline.
func TestThePageOfAKeyReleaseInBothFormsRunsWithCosignV2AndV3(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("publishes a release and runs the cosign CLIs")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	dir := t.TempDir()
	s, err := releasetest.NewKeySigner(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: startRegistry(t).Host, Signer: s, Seed: 45, SignatureFormat: sign.FormatBoth, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(out, "page", "versions.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "--trusted-root trusted_root.json") {
		t.Fatalf("the page's key commands name no trusted root for a release with bundles:\n%s", page)
	}
	root := filepath.Join(out, "page", "trusted_root.json")
	lock := filepath.Join(dir, "reloader-release.json")
	for p, b := range map[string][]byte{lock: rel.LockJSON, lock + ".sigstore.json": rel.LockBundle} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pub := filepath.Join(dir, "cosign.pub")
	clientsVerify(t, ctx, rel.Lock, page, map[string]string{"cosign.pub": pub, "trusted_root.json": root}, nil,
		"--lock", lock, "--key", pub, "--allow-no-provenance")
}

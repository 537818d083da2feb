package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/page"
	"github.com/reloader-dev/reloader/publish/releasetest"
	testregistry "github.com/reloader-dev/reloader/test/registry"

	"github.com/reloader-dev/reloader/test/tools"
)

const (
	workflowIdentity = "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3"
	githubIssuer     = "https://token.actions.githubusercontent.com"
)

// virtualSigstore starts a fake Sigstore (Fulcio, TSA, Rekor keys) and
// writes its trusted_root.json.
func virtualSigstore(t *testing.T, dir, name string) (releasetest.Signer, string) {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	s, err := releasetest.NewKeylessSigner(vs, workflowIdentity, githubIssuer)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := s.TrustedRootJSON()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, tr, 0o644); err != nil {
		t.Fatal(err)
	}
	return s, p
}

func sha256File(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// writeCounter is a registry that counts every request that could write.
func writeCounter(t *testing.T) (*testregistry.Registry, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	r, err := testregistry.StartInProcess(testregistry.InProcessOptions{Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Method != http.MethodGet && req.Method != http.MethodHead {
				n.Add(1)
			}
			h.ServeHTTP(w, req)
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	return r, &n
}

// An archive signed by another Sigstore (whoever wrote it controls its CA),
// carrying that CA's trusted_root.json and naming the expected identity and
// issuer, is refused before any push: the trust anchor comes from the user,
// as a file or a digest, never from the archive alone.
func TestForgedKeylessArchiveIsRefusedBeforeAnyPush(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, genuineRoot := virtualSigstore(t, dir, "genuine-root.json")
	forger, forgedRoot := virtualSigstore(t, dir, "forged-root.json")
	src := startRegistry(t)
	rel, err := releasetest.Publish(context.Background(), releasetest.Options{Registry: src.Host, Signer: forger, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	// The forger exports with their own root, so the archive carries it.
	archive := filepath.Join(dir, "forged.tar")
	id := []string{"--certificate-identity", workflowIdentity, "--certificate-oidc-issuer", githubIssuer, "--insecure-ignore-sct", "--insecure-ignore-tlog", "--allow-unscanned"}
	if code, _, errs := runCLI(t, append([]string{"export", "--lock-ref", rel.LockRef, "--trusted-root", forgedRoot, "--to", archive}, id...)...); code != cli.ExitOK {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	air, writes := writeCounter(t)

	for _, c := range []struct {
		name  string
		extra []string
		code  int
		want  string
	}{
		{"no trust anchor given", nil, cli.ExitUsage, "--trusted-root"},
		{"the genuine trusted root", []string{"--trusted-root", genuineRoot}, cli.ExitRefused, "release lock"},
		{"the genuine root's digest", []string{"--trusted-root-sha256", sha256File(t, genuineRoot)}, cli.ExitRefused, "sha256"},
	} {
		for _, cmd := range []string{"import", "verify", "values", "plan"} {
			args := append([]string{cmd, "-f", archive, "--target", air.Host + "/forged"}, id...)
			code, _, errs := runCLI(t, append(args, c.extra...)...)
			if code != c.code || !strings.Contains(errs, c.want) {
				t.Errorf("%s with %s: exit %d, want %d with %q: %s", cmd, c.name, code, c.code, c.want, errs)
			}
		}
	}
	if n := writes.Load(); n != 0 {
		t.Fatalf("%d writes reached the target registry", n)
	}
	// Trusting the forger's root on purpose, by its digest, is the user's
	// call and works: the flag checks, it does not forbid.
	if code, _, errs := runCLI(t, append([]string{"verify", "-f", archive, "--trusted-root-sha256", sha256File(t, forgedRoot)}, id...)...); code != cli.ExitOK {
		t.Fatalf("verify with the forged root's own digest: exit %d: %s", code, errs)
	}
}

// Keyless signatures need a transparency log entry unless the user waives
// it: a release whose bundles carry none is refused by default.
func TestKeylessWithoutTransparencyLogEntriesIsRefusedByDefault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, root := virtualSigstore(t, dir, "root.json")
	src := startRegistry(t)
	rel, err := releasetest.Publish(context.Background(), releasetest.Options{Registry: src.Host, Signer: s, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"verify", "--lock-ref", rel.LockRef, "--trusted-root", root, "--allow-unscanned",
		"--certificate-identity", workflowIdentity, "--certificate-oidc-issuer", githubIssuer, "--insecure-ignore-sct"}
	if code, _, errs := runCLI(t, args...); code != cli.ExitRefused || !strings.Contains(errs, "transparency log") {
		t.Fatalf("verify without log entries: exit %d, want %d naming the transparency log: %s", code, cli.ExitRefused, errs)
	}
	if code, _, errs := runCLI(t, append(args, "--insecure-ignore-tlog")...); code != cli.ExitOK {
		t.Fatalf("verify with --insecure-ignore-tlog: exit %d: %s", code, errs)
	}
}

// A release whose signatures are recorded in the (virtual) transparency log
// verifies under the default policy, which requires the entries.
func TestKeylessWithTransparencyLogEntriesVerifiesByDefault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, root := virtualSigstore(t, dir, "root.json")
	s.Tlog = true
	src := startRegistry(t)
	rel, err := releasetest.Publish(context.Background(), releasetest.Options{Registry: src.Host, Signer: s, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	dst, writes := writeCounter(t)
	args := []string{"--trusted-root", root, "--allow-unscanned", "--certificate-identity", workflowIdentity, "--certificate-oidc-issuer", githubIssuer, "--insecure-ignore-sct"}
	if code, _, errs := runCLI(t, append([]string{"verify", "--lock-ref", rel.LockRef}, args...)...); code != cli.ExitOK {
		t.Fatalf("verify with log entries: exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, append([]string{"copy", "--lock-ref", rel.LockRef, "--target", dst.Host + "/logged"}, args...)...); code != cli.ExitOK || writes.Load() == 0 {
		t.Fatalf("copy with log entries: exit %d, %d writes: %s", code, writes.Load(), errs)
	}
}

// A keyless release's versions page commands (cosign verify and
// verify-attestation with the workflow identity and the trusted root the
// page names) succeed with the real cosign CLI, offline, at the source and
// on a mirrored copy.
func TestTheCosignCLIVerifiesAKeylessReleaseAsItsPageSays(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the cosign CLI")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	dir := t.TempDir()
	s, root := virtualSigstore(t, dir, "trusted_root.json")
	s.Tlog = true
	src := startRegistry(t)
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	md, _, err := page.Render(page.Build(rel.Lock, page.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	// The test CA issues certificates without SCTs; Fulcio's carry them.
	clientsVerify(t, ctx, rel.Lock, md, map[string]string{"trusted_root.json": root}, []string{"--insecure-ignore-sct"},
		"--lock-ref", rel.LockRef, "--trusted-root", root, "--certificate-identity", workflowIdentity, "--certificate-oidc-issuer", githubIssuer, "--insecure-ignore-sct")
}

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
)

// A keyless release whose lock certificate lacks GitHub's source repository
// extensions (a private CA's, which binds the signature to no repository,
// commit or tag) is refused by every command that verifies, exit 3, naming
// the missing extension and --allow-unbound-certificate, before anything is
// written; with the flag it runs, and verify -o json records the warning.
func TestAnUnboundKeylessCertificateIsRefusedUnlessAllowed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	// No GitHub CA: the VirtualSigstore's own certificates, without the
	// source extensions.
	s := releasetest.Signer{Sigstore: vs, Identity: workflowIdentity, Issuer: githubIssuer}
	rootJSON, err := s.TrustedRootJSON()
	if err != nil {
		t.Fatal(err)
	}
	trustedRoot := filepath.Join(dir, "trusted_root.json")
	if err := os.WriteFile(trustedRoot, rootJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	src := startRegistry(t)
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: 41})
	if err != nil {
		t.Fatal(err)
	}
	air, writes := writeCounter(t)
	id := []string{"--lock-ref", rel.LockRef, "--certificate-identity", workflowIdentity, "--certificate-oidc-issuer", githubIssuer,
		"--trusted-root", trustedRoot, "--insecure-ignore-sct", "--insecure-ignore-tlog", "--allow-unscanned"}
	target := []string{"--target", air.Host + "/unbound"}
	archive := filepath.Join(dir, "unbound.tar")
	for _, args := range [][]string{append([]string{"verify"}, target...), append([]string{"plan"}, target...),
		append([]string{"values"}, target...), append([]string{"copy"}, target...), {"export", "--to", archive}} {
		code, _, errs := runCLI(t, append(args, id...)...)
		if code != cli.ExitRefused || !strings.Contains(errs, "carries no source repository URI (1.3.6.1.4.1.57264.1.12)") ||
			!strings.Contains(errs, "--allow-unbound-certificate") {
			t.Errorf("%s of an unbound release: exit %d, want %d naming the missing extension and the flag: %s", args[0], code, cli.ExitRefused, errs)
		}
	}
	if _, err := os.Stat(archive); err == nil {
		t.Error("the refused export wrote its archive")
	}
	if n := writes.Load(); n != 0 {
		t.Errorf("the refused commands sent %d writing requests to the target", n)
	}

	code, out, errs := runCLI(t, append([]string{"verify", "-o", "json", "--allow-unbound-certificate"}, id...)...)
	var report struct {
		Lock struct {
			CertificateBound bool
			Warnings         []string
		}
	}
	if code != cli.ExitOK || json.Unmarshal([]byte(out), &report) != nil || report.Lock.CertificateBound || len(report.Lock.Warnings) != 1 ||
		!strings.Contains(report.Lock.Warnings[0], "accepted by --allow-unbound-certificate") {
		t.Errorf("verify -o json --allow-unbound-certificate: exit %d, want %d with the warning on record: %s %s", code, cli.ExitOK, out, errs)
	}
}

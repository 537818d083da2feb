//go:build !race

package mirror_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release/trust"
)

const (
	workflowIdentity = "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3"
	githubIssuer     = "https://token.actions.githubusercontent.com"
)

// publishKeyless publishes a release signed keyless by a VirtualSigstore
// (fake Fulcio, TSA, Rekor) and writes its trusted_root.json to disk.
func publishKeyless(t *testing.T) (fixture, string) {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	s, err := releasetest.NewKeylessSigner(vs, workflowIdentity, githubIssuer)
	if err != nil {
		t.Fatal(err)
	}
	src := startInProcess(t, nil)
	rel, err := releasetest.Publish(context.Background(), releasetest.Options{Registry: src.Host, Signer: s, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	trJSON, err := s.TrustedRootJSON()
	if err != nil {
		t.Fatal(err)
	}
	rootFile := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(rootFile, trJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	return fixture{src: src, tamper: &tamperer{}, rel: rel, signer: s}, rootFile
}

func TestKeylessReleaseVerifiesOfflineAgainstTrustedRootOnDisk(t *testing.T) {
	f, rootFile := publishKeyless(t)
	// VirtualSigstore's test CA logs to no CT log, so its certificates carry
	// no SCT, and the test release records no Rekor entry: the
	// verifications this test must opt out of, explicitly.
	p, err := trust.LoadPolicy(trust.PolicyFiles{Identity: workflowIdentity, Issuer: githubIssuer, TrustedRootFile: rootFile, IgnoreSCT: true, IgnoreTlog: true})
	if err != nil {
		t.Fatal(err)
	}
	f.policy = p
	dst := startInProcess(t, nil)
	target := dst.Host + "/keyless"
	rc, err := copyRelease(context.Background(), f.options(t, target))
	if err != nil {
		t.Fatal(err)
	}
	assertMirrored(t, f, target, rc)
}

func TestKeylessWrongIdentityIsRejectedBeforePushing(t *testing.T) {
	f, rootFile := publishKeyless(t)
	for _, p := range []trust.PolicyFiles{
		{Identity: "https://github.com/someone-else/fork/.github/workflows/release.yml@refs/tags/v1.2.3", Issuer: githubIssuer, TrustedRootFile: rootFile, IgnoreSCT: true, IgnoreTlog: true},
		{IdentityRegexp: `^https://github\.com/reloader-dev/reloader/.+@refs/heads/main$`, Issuer: githubIssuer, TrustedRootFile: rootFile, IgnoreSCT: true, IgnoreTlog: true},
		{Identity: workflowIdentity, Issuer: "https://accounts.google.com", TrustedRootFile: rootFile, IgnoreSCT: true, IgnoreTlog: true},
	} {
		pol, err := trust.LoadPolicy(p)
		if err != nil {
			t.Fatal(err)
		}
		f.policy = pol
		var ch countingHandler
		dst := startInProcess(t, ch.wrap)
		_, err = copyRelease(context.Background(), f.options(t, dst.Host+"/keyless"))
		if err == nil {
			t.Fatalf("policy %+v accepted a release signed by %s", p, workflowIdentity)
		}
		if !strings.Contains(err.Error(), "lock") {
			t.Errorf("error %q does not say the lock failed", err)
		}
		if ch.count() != 0 {
			t.Errorf("%d writes reached the target", ch.count())
		}
	}
}

func TestKeylessPolicyNeedsATrustedRoot(t *testing.T) {
	if _, err := trust.LoadPolicy(trust.PolicyFiles{Identity: workflowIdentity, Issuer: githubIssuer}); err == nil {
		t.Fatal("a keyless policy without a trusted root was accepted")
	}
	if _, err := trust.LoadPolicy(trust.PolicyFiles{Issuer: githubIssuer, TrustedRootJSON: []byte("{}")}); err == nil {
		t.Fatal("a policy trusting any identity was accepted")
	}
}

// Without the explicit opt-out, a certificate with no certificate
// transparency timestamp is refused before anything is pushed: the default
// policy requires one, as public Fulcio certificates always carry it.
func TestKeylessWithoutSCTIsRejectedByDefault(t *testing.T) {
	f, rootFile := publishKeyless(t)
	pol, err := trust.LoadPolicy(trust.PolicyFiles{Identity: workflowIdentity, Issuer: githubIssuer, TrustedRootFile: rootFile, IgnoreTlog: true})
	if err != nil {
		t.Fatal(err)
	}
	f.policy = pol
	var ch countingHandler
	dst := startInProcess(t, ch.wrap)
	_, err = copyRelease(context.Background(), f.options(t, dst.Host+"/keyless"))
	if err == nil || !strings.Contains(err.Error(), "certificate timestamp") {
		t.Fatalf("copy without SCTs: got %v, want a refusal naming the certificate timestamp", err)
	}
	if n := ch.count(); n != 0 {
		t.Fatalf("%d writes reached the target before the refusal", n)
	}
}

// A trusted root carried with the release is used only when the user's
// digest of it matches; without one it is refused, with one that differs
// it is untrusted.
func TestCarriedTrustedRootNeedsTheUsersDigest(t *testing.T) {
	_, rootFile := publishKeyless(t)
	carried, err := os.ReadFile(rootFile)
	if err != nil {
		t.Fatal(err)
	}
	base := trust.PolicyFiles{Identity: workflowIdentity, Issuer: githubIssuer, TrustedRootJSON: carried, TrustedRootSource: "archive:trust/trusted_root.json"}
	if _, err := trust.LoadPolicy(base); !errors.Is(err, trust.ErrPolicy) {
		t.Fatalf("carried root without a digest: got %v, want a policy error", err)
	}
	wrong := base
	wrong.TrustedRootSHA256 = strings.Repeat("0", 64)
	if _, err := trust.LoadPolicy(wrong); !errors.Is(err, trust.ErrUntrusted) {
		t.Fatalf("carried root with another digest: got %v, want untrusted", err)
	}
	right := base
	sum := sha256.Sum256(carried)
	right.TrustedRootSHA256 = hex.EncodeToString(sum[:])
	p, err := trust.LoadPolicy(right)
	if err != nil || p.TrustedRoot == nil {
		t.Fatalf("carried root with its digest: %v", err)
	}
	if p.TransparencyLogThreshold != 1 {
		t.Fatalf("a loaded keyless policy requires %d log entries, want 1", p.TransparencyLogThreshold)
	}
}

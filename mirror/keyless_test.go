package mirror_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/testrelease"
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
	s := testrelease.Signer{Sigstore: vs, Identity: workflowIdentity, Issuer: githubIssuer}
	src := startInProcess(t, nil)
	rel, err := testrelease.Publish(context.Background(), testrelease.Options{Registry: src.Host, Signer: s, Seed: 2})
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
	// no SCT: the one verification this test must opt out of, explicitly.
	p, err := trust.LoadPolicy(trust.PolicyFiles{Identity: workflowIdentity, Issuer: githubIssuer, TrustedRootFile: rootFile, IgnoreSCT: true})
	if err != nil {
		t.Fatal(err)
	}
	f.policy = p
	dst := startInProcess(t, nil)
	target := dst.Host + "/keyless"
	rc, err := mirror.Mirror(context.Background(), f.options(t, target))
	if err != nil {
		t.Fatal(err)
	}
	assertMirrored(t, f, target, rc)
}

func TestKeylessWrongIdentityIsRejectedBeforePushing(t *testing.T) {
	f, rootFile := publishKeyless(t)
	for _, p := range []trust.PolicyFiles{
		{Identity: "https://github.com/someone-else/fork/.github/workflows/release.yml@refs/tags/v1.2.3", Issuer: githubIssuer, TrustedRootFile: rootFile, IgnoreSCT: true},
		{IdentityRegexp: `^https://github\.com/reloader-dev/reloader/.+@refs/heads/main$`, Issuer: githubIssuer, TrustedRootFile: rootFile, IgnoreSCT: true},
		{Identity: workflowIdentity, Issuer: "https://accounts.google.com", TrustedRootFile: rootFile, IgnoreSCT: true},
	} {
		pol, err := trust.LoadPolicy(p)
		if err != nil {
			t.Fatal(err)
		}
		f.policy = pol
		var ch countingHandler
		dst := startInProcess(t, ch.wrap)
		_, err = mirror.Mirror(context.Background(), f.options(t, dst.Host+"/keyless"))
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
	pol, err := trust.LoadPolicy(trust.PolicyFiles{Identity: workflowIdentity, Issuer: githubIssuer, TrustedRootFile: rootFile})
	if err != nil {
		t.Fatal(err)
	}
	f.policy = pol
	var ch countingHandler
	dst := startInProcess(t, ch.wrap)
	_, err = mirror.Mirror(context.Background(), f.options(t, dst.Host+"/keyless"))
	if err == nil || !strings.Contains(err.Error(), "certificate timestamp") {
		t.Fatalf("copy without SCTs: got %v, want a refusal naming the certificate timestamp", err)
	}
	if n := ch.count(); n != 0 {
		t.Fatalf("%d writes reached the target before the refusal", n)
	}
}

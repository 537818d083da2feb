package trust_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
	"github.com/reloader-dev/reloader/test/virtualsigstore"
)

const (
	releaseWorkflow = "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3"
	repository      = "https://github.com/reloader-dev/reloader"
	actionsIssuer   = "https://token.actions.githubusercontent.com"
)

func githubCA(t *testing.T) *virtualsigstore.GitHubCA {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	g, err := virtualsigstore.NewGitHubCA(vs)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// keylessPolicy trusts identity (or the regexp) from GitHub, anchored at g;
// the test CA logs to no CT log and the bundles carry only a timestamp.
func keylessPolicy(t *testing.T, g *virtualsigstore.GitHubCA, identity, regexp string) trust.Policy {
	t.Helper()
	tr, err := g.TrustedRoot()
	if err != nil {
		t.Fatal(err)
	}
	// The fixture logs to no CT log and no Rekor: these tests are about
	// the identity, so they waive both explicitly.
	return trust.Policy{Identity: identity, IdentityRegexp: regexp, Issuer: actionsIssuer, TrustedRoot: tr, IgnoreSCT: true, InsecureIgnoreTlog: true}
}

// keylessLock is lockFor(...) signed by a certificate naming src.
func keylessLock(t *testing.T, g *virtualsigstore.GitHubCA, src virtualsigstore.Source) (l *release.Lock, lockJSON, bundle []byte) {
	t.Helper()
	s, err := g.Signer(releaseWorkflow, actionsIssuer, src)
	if err != nil {
		t.Fatal(err)
	}
	l = lockFor(release.Signer{Identity: releaseWorkflow, Issuer: actionsIssuer})
	lockJSON, bundle = signedLock(t, s, l)
	return l, lockJSON, bundle
}

// cosign and sigstore-go match an identity regexp anywhere in the
// certificate's identity; ours must match all of it, or "reloader-dev/reloader"
// would trust every workflow on every branch (and every fork's URL).
func TestAnIdentityRegexpMatchingOnlyPartOfTheCertificateIdentityDoesNotVerify(t *testing.T) {
	g := githubCA(t)
	l, lockJSON, bundle := keylessLock(t, g, virtualsigstore.SourceOf(repository, strings.Repeat("a", 40), "v1.2.3"))
	for _, substring := range []string{`reloader-dev/reloader`, `https://github\.com/reloader-dev/reloader/`, `release\.yml@refs/tags/v1\.2\.3`} {
		if _, _, err := verifier(t, keylessPolicy(t, g, "", substring)).Lock(lockJSON, bundle); !errors.Is(err, trust.ErrUntrusted) {
			t.Errorf("regexp %q matches only part of %s, yet Lock = %v; want ErrUntrusted", substring, releaseWorkflow, err)
		}
	}
	whole := `https://github\.com/reloader-dev/reloader/\.github/workflows/release\.yml@refs/tags/v.+`
	if got, _, err := verifier(t, keylessPolicy(t, g, "", whole)).Lock(lockJSON, bundle); err != nil || got.Version != l.Version {
		t.Fatalf("a regexp matching the whole identity: %v", err)
	}
}

// The identity names a workflow and a tag, not the code: a git tag moved to
// another commit and re-run through the workflow signs with the same
// identity. The certificate's source repository digest and ref say what ran.
func TestACertificateIssuedForAnotherCommitOrTagIsRefused(t *testing.T) {
	g := githubCA(t)
	commit := strings.Repeat("a", 40)
	p := keylessPolicy(t, g, releaseWorkflow, "")

	_, lockJSON, bundle := keylessLock(t, g, virtualsigstore.SourceOf(repository, commit, "v1.2.3"))
	_, res, err := verifier(t, p).Lock(lockJSON, bundle)
	if err != nil || !res.CertificateBound {
		t.Fatalf("a certificate naming the lock's commit and tag: bound %v, %v", res.CertificateBound, err)
	}
	for name, c := range map[string]struct {
		src  virtualsigstore.Source
		want string
	}{
		"another commit":     {virtualsigstore.SourceOf(repository, strings.Repeat("b", 40), "v1.2.3"), "issued for commit " + strings.Repeat("b", 40) + ", but the lock is commit " + commit},
		"another tag":        {virtualsigstore.SourceOf(repository, commit, "v1.2.2"), "issued for refs/tags/v1.2.2, not refs/tags/v1.2.3"},
		"a branch":           {virtualsigstore.Source{URI: repository, Digest: commit, Ref: "refs/heads/main"}, "issued for refs/heads/main"},
		"another repository": {virtualsigstore.SourceOf("https://github.com/someone/fork", commit, "v1.2.3"), "issued for repository https://github.com/someone/fork, but the lock is of " + repository},
	} {
		t.Run(name, func(t *testing.T) {
			_, lockJSON, bundle := keylessLock(t, g, c.src)
			_, _, err := verifier(t, p).Lock(lockJSON, bundle)
			if !errors.Is(err, trust.ErrUntrusted) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Lock = %v, want ErrUntrusted saying %q", err, c.want)
			}
		})
	}
}

// A certificate that lacks any of GitHub's source repository extensions binds
// the signature to no code: it is refused, naming what is missing and the
// flag; with --allow-unbound-certificate it verifies, unbound, and the lock
// result records the warning.
func TestACertificateWithoutTheSourceExtensionsIsRefusedUnlessAllowed(t *testing.T) {
	g := githubCA(t)
	commit := strings.Repeat("a", 40)
	p := keylessPolicy(t, g, releaseWorkflow, "")
	for name, c := range map[string]struct {
		src     virtualsigstore.Source
		missing []string
	}{
		"none of them": {virtualsigstore.Source{}, []string{"source repository URI (1.3.6.1.4.1.57264.1.12)",
			"source repository digest (1.3.6.1.4.1.57264.1.13)", "source repository ref (1.3.6.1.4.1.57264.1.14)"}},
		"no URI":    {virtualsigstore.Source{Digest: commit, Ref: "refs/tags/v1.2.3"}, []string{"source repository URI"}},
		"no digest": {virtualsigstore.Source{URI: repository, Ref: "refs/tags/v1.2.3"}, []string{"source repository digest"}},
		"no ref":    {virtualsigstore.Source{URI: repository, Digest: commit}, []string{"source repository ref"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, lockJSON, bundle := keylessLock(t, g, c.src)
			_, _, err := verifier(t, p).Lock(lockJSON, bundle)
			if !errors.Is(err, trust.ErrUntrusted) || !strings.Contains(err.Error(), "--allow-unbound-certificate") {
				t.Fatalf("Lock = %v, want ErrUntrusted naming --allow-unbound-certificate", err)
			}
			for _, m := range c.missing {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("refusal %q does not name the missing %s extension", err, m)
				}
			}
			allowed := p
			allowed.AllowUnboundCertificate = true
			_, res, err := verifier(t, allowed).Lock(lockJSON, bundle)
			if err != nil || res.CertificateBound || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], c.missing[0]) ||
				!strings.Contains(res.Warnings[0], "accepted by --allow-unbound-certificate") {
				t.Fatalf("allowed: bound %v, warnings %q, %v; want verified, unbound, the warning on record", res.CertificateBound, res.Warnings, err)
			}
		})
	}
}

// The version is checked after the signature: a genuine lock of another
// version is refused, naming both.
func TestALockOfAnotherVersionThanAskedForIsRefused(t *testing.T) {
	ours := newKeySigner(t)
	lockJSON, bundle := signedLock(t, ours.signer, lockFor(ours.signer.Identity()))
	for name, c := range map[string]struct {
		b    trust.Binding
		want string
	}{
		"a re-pointed tag":     {trust.Binding{Tag: "v1.3.0"}, "the tag v1.3.0 holds the lock of v1.2.3"},
		"a chart-style tag":    {trust.Binding{Tag: "1.3.0"}, "the tag 1.3.0 holds the lock of v1.2.3"},
		"an expected version":  {trust.Binding{Version: "v1.3.0"}, "the release is v1.2.3, but v1.3.0 was expected"},
		"a pre-release of it":  {trust.Binding{Version: "v1.2.3-rc.1"}, "but v1.2.3-rc.1 was expected"},
		"tag right, expect no": {trust.Binding{Tag: "v1.2.3", Version: "v1.2.4"}, "but v1.2.4 was expected"},
	} {
		t.Run(name, func(t *testing.T) {
			p := ours.policy
			p.Expect = c.b
			_, _, err := verifier(t, p).Lock(lockJSON, bundle)
			if !errors.Is(err, trust.ErrNotAskedFor) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Lock = %v, want ErrNotAskedFor saying %q", err, c.want)
			}
		})
	}
	for _, b := range []trust.Binding{{Tag: "v1.2.3"}, {Tag: "1.2.3"}, {Tag: "latest"}, {Version: "v1.2.3"}, {Version: "1.2.3"}, {}} {
		p := ours.policy
		p.Expect = b
		if _, _, err := verifier(t, p).Lock(lockJSON, bundle); err != nil {
			t.Errorf("binding %+v on the v1.2.3 lock: %v", b, err)
		}
	}
}

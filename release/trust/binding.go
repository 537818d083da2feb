package trust

import (
	"fmt"
	"strings"

	"github.com/sigstore/sigstore-go/pkg/fulcio/certificate"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	"golang.org/x/mod/semver"

	"github.com/reloader-dev/reloader/release"
)

// ErrNotAskedFor: the lock verified, but it is not the release the caller
// asked for (a tag re-pointed at an older lock, an older archive handed
// over). It wraps ErrUntrusted: a replayed release must not be used.
var ErrNotAskedFor = fmt.Errorf("%w: not the release asked for", ErrUntrusted)

// Binding is which release the caller asked for. A signature says only that
// the signer made a lock at some time; replaying an older signed lock under
// a newer name passes every signature check, so the version is held to what
// was asked for, after the signature verified (nothing unverified is read).
type Binding struct {
	// Tag is the tag the lock was fetched by ("" for a file, an archive or
	// a digest). A version tag must hold the lock of that version; other
	// tags ("latest") promise no version, so they bind nothing.
	Tag string
	// Version is the exact version the user expects (--expect-version).
	Version string
}

// Check refuses a lock that is not the release asked for.
func (b Binding) Check(l *release.Lock) error {
	if b.Tag != "" && isVersionTag(b.Tag) && !sameVersion(b.Tag, l.Version) {
		return fmt.Errorf("%w: the tag %s holds the lock of %s", ErrNotAskedFor, b.Tag, l.Version)
	}
	if b.Version != "" && !sameVersion(b.Version, l.Version) {
		return fmt.Errorf("%w: the release is %s, but %s was expected (--expect-version)", ErrNotAskedFor, l.Version, b.Version)
	}
	return nil
}

// isVersionTag: release tags are semantic versions, with or without the
// leading v (Helm charts drop it).
func isVersionTag(tag string) bool {
	return semver.IsValid(tag) || semver.IsValid("v"+tag)
}

// sameVersion compares exactly, only forgiving the leading v: v1.2.3 is
// not v1.2.3-rc.1, nor v1.2.3+build.
func sameVersion(want, got string) bool {
	return want == got || "v"+want == got
}

// githubSource are the Fulcio extensions a GitHub Actions certificate
// carries about the code that ran: the repository, the commit and the git
// ref (OIDs 1.3.6.1.4.1.57264.1.12, .13 and .14, which cosign's
// --certificate-github-workflow-repository family reads).
type githubSource struct{ uri, digest, ref string }

func sourceOf(s *certificate.Summary) githubSource {
	return githubSource{uri: s.SourceRepositoryURI, digest: s.SourceRepositoryDigest, ref: s.SourceRepositoryRef}
}

// missing names the extensions the certificate lacks.
func (g githubSource) missing() []string {
	var out []string
	for _, e := range []struct{ name, val string }{
		{"source repository URI (1.3.6.1.4.1.57264.1.12)", g.uri},
		{"source repository digest (1.3.6.1.4.1.57264.1.13)", g.digest},
		{"source repository ref (1.3.6.1.4.1.57264.1.14)", g.ref},
	} {
		if e.val == "" {
			out = append(out, e.name)
		}
	}
	return out
}

// checkCertificateSource holds a keyless lock certificate to the lock: the
// identity alone names a workflow and a tag, so a git tag moved to other code
// and re-run through the workflow signs with the same identity; the source
// digest says which commit actually ran, the ref which tag, and the URI
// which repository. A certificate must carry all three and name the lock's
// source, commit and refs/tags/<version>. One that lacks any (a private CA
// that does not issue GitHub's extensions) binds nothing and is refused,
// unless the policy allows it; then the warning is returned.
func (p Policy) checkCertificateSource(l *release.Lock, vr *sgverify.VerificationResult) (bound bool, warning string, err error) {
	if !p.Keyless() || vr == nil || vr.Signature == nil || vr.Signature.Certificate == nil {
		return false, "", nil
	}
	src := sourceOf(vr.Signature.Certificate)
	switch {
	case src.uri != "" && l.Source != "" && !strings.EqualFold(strings.TrimSuffix(src.uri, ".git"), l.Source):
		return false, "", fmt.Errorf("%w: release lock %s: the signing certificate was issued for repository %s, but the lock is of %s",
			ErrUntrusted, l.Version, src.uri, l.Source)
	case src.digest != "" && !strings.EqualFold(src.digest, l.Commit):
		return false, "", fmt.Errorf("%w: release lock %s: the signing certificate was issued for commit %s, but the lock is commit %s",
			ErrUntrusted, l.Version, src.digest, l.Commit)
	case src.ref != "" && src.ref != "refs/tags/"+l.Version:
		return false, "", fmt.Errorf("%w: release lock %s: the signing certificate was issued for %s, not refs/tags/%s",
			ErrUntrusted, l.Version, src.ref, l.Version)
	}
	missing := src.missing()
	if len(missing) == 0 {
		return true, "", nil
	}
	what := fmt.Sprintf("release lock %s: the signing certificate carries no %s extension, so nothing binds the signature to the code that ran",
		l.Version, strings.Join(missing, ", no "))
	if !p.AllowUnboundCertificate {
		return false, "", fmt.Errorf("%w: %s; --allow-unbound-certificate to accept it (a private CA that issues no GitHub extensions)", ErrUntrusted, what)
	}
	return false, what + ", accepted by --allow-unbound-certificate", nil
}

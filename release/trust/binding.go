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
// carries about the code that ran: the commit and the git ref.
type githubSource struct{ digest, ref string }

func sourceOf(s *certificate.Summary) githubSource {
	return githubSource{digest: s.SourceRepositoryDigest, ref: s.SourceRepositoryRef}
}

// checkCertificateSource holds a keyless lock certificate to the lock: the
// identity alone names a workflow and a tag, so a git tag moved to other code
// and re-run through the workflow signs with the same identity; the source
// digest says which commit actually ran, and the ref which tag. A
// certificate that carries them must name the lock's commit and
// refs/tags/<version>. One that carries none (a private CA that does not
// issue GitHub's extensions) is reported as unbound in the lock result.
func (p Policy) checkCertificateSource(l *release.Lock, vr *sgverify.VerificationResult) (bound bool, err error) {
	if !p.Keyless() || vr == nil || vr.Signature == nil || vr.Signature.Certificate == nil {
		return false, nil
	}
	src := sourceOf(vr.Signature.Certificate)
	switch {
	case src.digest != "" && !strings.EqualFold(src.digest, l.Commit):
		return false, fmt.Errorf("%w: release lock %s: the signing certificate was issued for commit %s, but the lock is commit %s",
			ErrUntrusted, l.Version, src.digest, l.Commit)
	case src.ref != "" && src.ref != "refs/tags/"+l.Version:
		return false, fmt.Errorf("%w: release lock %s: the signing certificate was issued for %s, not refs/tags/%s",
			ErrUntrusted, l.Version, src.ref, l.Version)
	}
	return src.digest != "", nil
}

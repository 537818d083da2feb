// Package trust decides, offline, whether a release may be trusted: the
// lock's signature, and every signature the lock lists, in both formats
// (cosign's .sig/.att tag signatures, verified with cosign's pkg/cosign, and
// Sigstore bundles attached as OCI referrers, verified with sigstore-go). It
// is the only code that verifies signatures; reloader-mirror and
// reloader-release verify both use it.
//
// As in sigstore-go's pkg/verify, the caller states a Policy (whom to
// trust), builds one Verifier from it, which refuses an incomplete policy up
// front, and verifies many things with it. A verdict against the release is
// an error wrapping ErrUntrusted; a policy that cannot be used wraps
// ErrPolicy. Nothing here opens a network connection unless the caller
// passes registry options: keys and trusted roots come from files.
package trust

import (
	"bytes"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore/pkg/cryptoutils"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/provenance"
	"github.com/reloader-dev/reloader/release/scancheck"

	"github.com/reloader-dev/reloader/internal/exitcode"
)

// Policy says whom to trust. Either public keys (key-based signing: PublicKey,
// Keys or both), or a certificate identity (Identity or IdentityRegexp) with
// its OIDC Issuer and the TrustedRoot that anchors keyless certificates.
type Policy struct {
	// PublicKey is a key trusted without a window: the one-key policy.
	PublicKey crypto.PublicKey
	// Keys are further keys, each with an optional window: several keys
	// during a rotation, the old one accepted until its NotAfter (see
	// keys.go).
	Keys []TrustedKey
	// Now is the verifier's clock, which key windows are judged by; nil is
	// the system clock.
	Now func() time.Time

	Identity       string
	IdentityRegexp string
	Issuer         string
	TrustedRoot    *root.TrustedRoot
	// TrustedRootSource says where TrustedRoot came from, for reports.
	TrustedRootSource string
	// TransparencyLogThreshold is how many verified transparency log
	// entries every keyless signature needs, in either format (bundle or
	// cosign); below one it is one. It is a count, never the switch: a
	// Policy built without it still requires the log.
	TransparencyLogThreshold int
	// RequireScan refuses a release whose lock records no vulnerability
	// scan, or records that the scan was skipped (--no-scan).
	RequireScan bool
	// Scan, when set, is the consumer's policy for the signed scan record
	// (database age, exceptions expired since the release, severities):
	// see scancheck.go.
	Scan *scancheck.Policy
	// RequireProvenance refuses a release any of whose images or indexes
	// lacks SLSA v1 provenance signed by the release signer. Provenance
	// that is present is always checked (source, commit, subject), required
	// or not.
	RequireProvenance bool
	// ExpectBuilder is the builder id (SLSA runDetails.builder.id) every
	// provenance statement must name. Empty means the builder a release by
	// the lock's signer names: for keyless, the signer's certificate
	// identity, because only the release workflow's signing job, which
	// alone holds that identity, writes provenance; for a key,
	// provenance.LocalBuilder, what reloader-release records outside the
	// release workflow. See ExpectedBuilder.
	ExpectBuilder string
	// InsecureIgnoreTlog accepts keyless signatures with no transparency
	// log entry, in either format. The product promises signatures recorded
	// in Rekor, so this is only for a private Sigstore without a log, asked
	// for explicitly (--insecure-ignore-tlog). It is the one representation
	// of "no log", and its zero value is the safe one.
	InsecureIgnoreTlog bool
	// IgnoreSCT accepts keyless certificates without a verified certificate
	// transparency timestamp. Public Fulcio embeds one in every certificate,
	// so the default requires it; only a private CA that logs to no CT log
	// (or a test CA) needs this, and it must be asked for explicitly.
	IgnoreSCT bool
	// AllowUnboundCertificate accepts a keyless lock certificate that lacks
	// GitHub's source repository extensions (URI, digest, ref), which bind
	// the signature to the code that ran; the lock result records the
	// warning. Public Fulcio writes them for every GitHub Actions
	// certificate, so only a private CA that does not needs this, asked
	// for explicitly (--allow-unbound-certificate).
	AllowUnboundCertificate bool
	// Expect is the release the caller asked for; Verifier.Lock refuses a
	// lock of another version (see Binding).
	Expect Binding
}

// Errors are classified by what they mean, never by their text; each
// carries its exit-code class, so a command needs no list of them.
var (
	// ErrUntrusted: the material does not verify against the policy (a
	// signature, a signer, a digest). Callers must not use what failed.
	ErrUntrusted = exitcode.New(exitcode.Refused, "untrusted")
	// ErrUnscanned: the policy requires a scanned release and the lock
	// records none. It wraps ErrUntrusted: the release must not be used.
	ErrUnscanned = fmt.Errorf("%w: the release was not scanned for vulnerabilities", ErrUntrusted)
	// ErrPolicy: the policy is incomplete or its key or trusted root
	// cannot be read; nothing was verified.
	ErrPolicy = exitcode.New(exitcode.Usage, "trust policy")
)

func policyErr(msg string) error { return fmt.Errorf("%w: %s", ErrPolicy, msg) }

// Keyless reports whether the policy trusts certificate identities.
func (p Policy) Keyless() bool { return p.PublicKey == nil && len(p.Keys) == 0 }

// Validate checks the policy is complete; an incomplete policy would trust
// too much, so verification refuses it.
func (p Policy) Validate() error {
	if !p.Keyless() {
		if p.Identity != "" || p.IdentityRegexp != "" {
			return policyErr("give a public key or a certificate identity, not both")
		}
		return p.validateKeys()
	}
	if p.Identity == "" && p.IdentityRegexp == "" {
		return policyErr("no public key and no certificate identity: refusing to trust anyone who signs")
	}
	if p.Identity != "" && p.IdentityRegexp != "" {
		return policyErr("give a certificate identity or an identity regexp, not both")
	}
	if p.IdentityRegexp != "" {
		if _, err := regexp.Compile(AnchorRegexp(p.IdentityRegexp)); err != nil {
			return fmt.Errorf("%w: identity regexp: %w", ErrPolicy, err)
		}
	}
	if p.Issuer == "" {
		return policyErr("a keyless identity needs its OIDC issuer")
	}
	if p.TrustedRoot == nil {
		return policyErr("keyless verification needs a trusted root (trusted_root.json)")
	}
	return nil
}

// Summary is the policy in words and fingerprints, for plans and reports.
type Summary struct {
	Mode string `json:"mode"`
	// KeySHA256 is the policy's key when it has one; in a LockResult, the
	// key that verified the release.
	KeySHA256 string `json:"keySha256,omitempty"`
	// Keys are every key the policy accepts, when it accepts several or
	// gives one a window.
	Keys           []KeySummary `json:"keys,omitempty"`
	Identity       string       `json:"identity,omitempty"`
	IdentityRegexp string       `json:"identityRegexp,omitempty"`
	Issuer         string       `json:"issuer,omitempty"`
	TrustedRoot    string       `json:"trustedRoot,omitempty"`
}

// Summary describes the policy.
func (p Policy) Summary() Summary {
	if !p.Keyless() {
		return p.keySummary()
	}
	return Summary{Mode: "keyless", Identity: p.Identity, IdentityRegexp: p.IdentityRegexp, Issuer: p.Issuer, TrustedRoot: p.TrustedRootSource}
}

// KeyFingerprint is the hex sha256 of the key's DER encoding.
func KeyFingerprint(k crypto.PublicKey) string {
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		return "unencodable key"
	}
	s := sha256.Sum256(der)
	return hex.EncodeToString(s[:])
}

// MatchesSigner checks the lock names the signer the policy trusts, so a lock
// signed by a trusted key cannot redirect users to expect someone else.
func (p Policy) MatchesSigner(s release.Signer) error {
	if !p.Keyless() {
		_, err := p.keyFor(s)
		return err
	}
	if !s.Keyless() {
		return fmt.Errorf("%w: the lock expects key-based signatures but the policy trusts a certificate identity", ErrUntrusted)
	}
	if s.Issuer != p.Issuer {
		return fmt.Errorf("%w: the lock names OIDC issuer %q but the policy trusts %q", ErrUntrusted, s.Issuer, p.Issuer)
	}
	if p.Identity != "" && s.Identity != "" && s.Identity != p.Identity {
		return fmt.Errorf("%w: the lock names identity %q but the policy trusts %q", ErrUntrusted, s.Identity, p.Identity)
	}
	return nil
}

// PolicyFiles names the files and values a policy is built from.
type PolicyFiles struct {
	// KeyFile is a PEM public key (cosign.pub).
	KeyFile string
	// KeyFiles are further keys, each with an optional window (rotation).
	KeyFiles       []KeyFile
	Identity       string
	IdentityRegexp string
	Issuer         string
	// TrustedRootFile is a trusted_root.json.
	TrustedRootFile string
	// TrustedRootJSON is a copy carried with the material being verified
	// (an archive's trust/trusted_root.json), used when TrustedRootFile is
	// empty. Whoever wrote the archive chose it, so it is trusted only when
	// TrustedRootSHA256, which the user got out of band, matches it.
	TrustedRootJSON   []byte
	TrustedRootSource string
	// TrustedRootSHA256 is the hex sha256 the trusted root must have.
	TrustedRootSHA256 string
	// IgnoreSCT: see Policy.IgnoreSCT.
	IgnoreSCT bool
	// IgnoreTlog: see Policy.InsecureIgnoreTlog.
	IgnoreTlog bool
}

// LoadPolicy builds a Policy from files; it reads only the local disk.
func LoadPolicy(f PolicyFiles) (Policy, error) {
	p := Policy{Identity: f.Identity, IdentityRegexp: f.IdentityRegexp, Issuer: f.Issuer, IgnoreSCT: f.IgnoreSCT, InsecureIgnoreTlog: f.IgnoreTlog}
	if f.KeyFile != "" || len(f.KeyFiles) > 0 {
		if f.KeyFile != "" {
			k, err := readPublicKey(f.KeyFile)
			if err != nil {
				return Policy{}, err
			}
			p.PublicKey = k
		}
		for _, kf := range f.KeyFiles {
			k, err := readPublicKey(kf.Path)
			if err != nil {
				return Policy{}, err
			}
			p.Keys = append(p.Keys, TrustedKey{Key: k, NotAfter: kf.NotAfter, Source: kf.Path})
		}
		return p, p.Validate()
	}
	rootJSON, src := f.TrustedRootJSON, f.TrustedRootSource
	if f.TrustedRootFile != "" {
		b, err := os.ReadFile(f.TrustedRootFile)
		if err != nil {
			return Policy{}, fmt.Errorf("%w: reading trusted root %s: %w", ErrPolicy, f.TrustedRootFile, err)
		}
		rootJSON, src = b, f.TrustedRootFile
	}
	if len(rootJSON) > 0 {
		if err := checkRootDigest(rootJSON, src, f.TrustedRootSHA256, f.TrustedRootFile == ""); err != nil {
			return Policy{}, err
		}
		tr, err := root.NewTrustedRootFromJSON(rootJSON)
		if err != nil {
			return Policy{}, fmt.Errorf("%w: parsing trusted root %s: %w", ErrPolicy, src, err)
		}
		p.TrustedRoot, p.TrustedRootSource = tr, src
	}
	p.TransparencyLogThreshold = 1
	return p, p.Validate()
}

// checkRootDigest holds a trusted root to the sha256 the user gave. A root
// carried with the material being verified must have one: otherwise the
// archive's author would choose the CA that vouches for the archive.
func checkRootDigest(rootJSON []byte, src, want string, carried bool) error {
	if want == "" {
		if carried {
			return policyErr(fmt.Sprintf("not trusting the trusted root %s carried with the release: it could come from whoever wrote the archive; "+
				"give --trusted-root FILE, or --trusted-root-sha256 with the digest you got from the publisher", src))
		}
		return nil
	}
	got := sha256.Sum256(rootJSON)
	if !strings.EqualFold(hex.EncodeToString(got[:]), strings.TrimPrefix(want, "sha256:")) {
		return fmt.Errorf("%w: trusted root %s has sha256 %s, not the expected %s", ErrUntrusted, src, hex.EncodeToString(got[:]), want)
	}
	return nil
}

func readPublicKey(path string) (crypto.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: reading public key %s: %w", ErrPolicy, path, err)
	}
	k, err := ParsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("%w: public key %s: %w", ErrPolicy, path, err)
	}
	return k, nil
}

// ParsePublicKey reads a PEM public key.
func ParsePublicKey(b []byte) (crypto.PublicKey, error) {
	blk, _ := pem.Decode(bytes.TrimSpace(b))
	if blk == nil {
		return nil, errors.New("no PEM block")
	}
	k, err := cryptoutils.UnmarshalPEMToPublicKey(pem.EncodeToMemory(blk))
	if err != nil {
		return nil, fmt.Errorf("parsing PEM public key: %w", err)
	}
	return k, nil
}

// PolicyFor is the policy that trusts exactly the signer s, as a lock names
// it; keyless signers need the trusted root that anchors their certificates.
func PolicyFor(s release.Signer, tr *root.TrustedRoot) (Policy, error) {
	if !s.Keyless() {
		k, err := ParsePublicKey([]byte(s.PublicKey))
		if err != nil {
			return Policy{}, fmt.Errorf("%w: the expected public key: %w", ErrPolicy, err)
		}
		return Policy{PublicKey: k}, nil
	}
	p := Policy{Identity: s.Identity, IdentityRegexp: s.IdentityRegexp, Issuer: s.Issuer, TrustedRoot: tr}
	return p, p.Validate()
}

// ExpectedBuilder is the builder id the policy requires of the provenance
// of a release signed as s (see Policy.ExpectBuilder), with a matcher: an
// exact string, or the anchored regexp of a lock that names its signer by
// regexp.
func (p Policy) ExpectedBuilder(s release.Signer) (string, func(string) bool) {
	exact := func(want string) (string, func(string) bool) {
		return want, func(got string) bool { return got == want }
	}
	switch {
	case p.ExpectBuilder != "":
		return exact(p.ExpectBuilder)
	case !s.Keyless():
		return exact(provenance.LocalBuilder)
	case s.Identity != "":
		return exact(s.Identity)
	}
	re, err := regexp.Compile(AnchorRegexp(s.IdentityRegexp))
	if err != nil {
		return s.IdentityRegexp, func(string) bool { return false }
	}
	return s.IdentityRegexp, re.MatchString
}

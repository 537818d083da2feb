package trust

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/sigstore-go/pkg/root"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/provenance"
	"github.com/reloader-dev/reloader/release/scancheck"
)

// Annotations and formats of the two signature formats.
const (
	cosignSignatureAnnot    = "dev.cosignproject.cosign/signature"
	cosignCertAnnot         = "dev.sigstore.cosign/certificate"
	cosignChainAnnot        = "dev.sigstore.cosign/chain"
	maxSignatureLayerBytes  = 4 << 20
	FormatCosignSignature   = "cosign-signature"
	FormatCosignAttestation = "cosign-attestation"
	FormatBundle            = "sigstore-bundle"
)

// Content reads what verification needs. Manifests must already be checked
// against their digests by the implementation; blobs are small signature
// payloads, and the implementation checks their digests too.
type Content interface {
	Manifest(ctx context.Context, a release.Artifact) ([]byte, error)
	SmallBlob(ctx context.Context, a release.Artifact, digest string, max int64) ([]byte, error)
}

// Format tells which signature format an artifact of the lock is, or "" for
// one that is not a signature (an SBOM referrer, a chart, an image).
func Format(a release.Artifact) string {
	switch {
	case strings.HasSuffix(a.Tag, ".sig"):
		return FormatCosignSignature
	case strings.HasSuffix(a.Tag, ".att"):
		return FormatCosignAttestation
	case a.ArtifactType == release.BundleMediaType:
		return FormatBundle
	}
	return ""
}

// LockResult is what was established about the lock.
type LockResult struct {
	Version string  `json:"version"`
	Commit  string  `json:"commit"`
	Signer  Summary `json:"signer"`
	// Digest is the sha256 of the lock bytes that were verified.
	Digest string `json:"digest"`
	// CertificateBound: the keyless certificate named the lock's source,
	// commit and tag (Fulcio's source repository URI, digest and ref), not
	// only the workflow identity.
	CertificateBound bool `json:"certificateBound,omitempty"`
	// Warnings are what the policy's exceptions let through (an unbound
	// certificate under AllowUnboundCertificate).
	Warnings []string `json:"warnings,omitempty"`
	// Scan is the consumer scan policy's verdict on the lock's scan
	// record, when the policy has one (Policy.Scan).
	Scan *scancheck.Result `json:"scanCheck,omitempty"`
	// TimeSource is what the keyless certificate's validity was judged
	// at (TimeSourceTimestamp, TimeSourceTlog, both joined by "+").
	TimeSource string `json:"timeSource,omitempty"`
}

// Verifier verifies releases against one Policy. It is built once, with
// the policy checked and the key loaded, and is safe for concurrent use.
type Verifier struct {
	policy Policy
	cosign *cosign.CheckOpts
	bundle *sgverify.Verifier
	// bundlePolicy is what a bundle's signer must be.
	bundlePolicy []sgverify.PolicyOption
	// statements and provenances remember what was parsed, verified what
	// was verified (parallel.go).
	statements, provenances, verified sync.Map
	// byKey, for a policy of several keys or a windowed one, verifies
	// each release with the key its lock names (rotation.go).
	byKey []keyVerifier
	// rec is what was verified (record.go).
	rec record
}

// NewVerifier checks the policy and prepares everything verification
// needs; an incomplete policy is refused here, before anything is read.
func NewVerifier(p Policy) (*Verifier, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	v := &Verifier{policy: p}
	if p.rotating() {
		var err error
		v.byKey, err = newKeyVerifiers(p)
		return v, err
	}
	co := &cosign.CheckOpts{Offline: true, IgnoreSCT: p.IgnoreSCT, ClaimVerifier: cosign.SimpleClaimVerifier}
	var (
		trusted root.TrustedMaterial
		vopts   []sgverify.VerifierOption
	)
	if !p.Keyless() {
		sv, err := signature.LoadVerifier(p.TrustedKeys()[0].Key, crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("%w: loading the public key: %w", ErrPolicy, err)
		}
		co.SigVerifier = sv
		// Key-based signing has no transparency log to consult offline;
		// the key is the trust anchor.
		co.IgnoreTlog = true
		// The bundle's key hint is only a hint: the policy has one key,
		// and the signature check decides.
		trusted = root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
			return root.NewExpiringKey(sv, time.Time{}, time.Time{}), nil
		})
		vopts = append(vopts, sgverify.WithNoObserverTimestamps())
		v.bundlePolicy = []sgverify.PolicyOption{sgverify.WithKey()}
	} else {
		co.TrustedMaterial = p.TrustedRoot
		// cosign and sigstore-go match a regexp anywhere in the identity;
		// the user's pattern must match all of it.
		co.Identities = []cosign.Identity{{Issuer: p.Issuer, Subject: p.Identity, SubjectRegExp: AnchorRegexp(p.IdentityRegexp)}}
		trusted = p.TrustedRoot
		// One setting drives both formats, so no path can require the
		// log for one and not the other; a timestamp-only trusted root
		// relaxes the bundle's log alone (see timesource.go).
		co.IgnoreTlog = p.InsecureIgnoreTlog
		vopts = append(vopts, p.timeOptions()...)
		if !p.IgnoreSCT {
			vopts = append(vopts, sgverify.WithSignedCertificateTimestamps(1))
		}
		id, err := sgverify.NewShortCertificateIdentity(p.Issuer, "", p.Identity, AnchorRegexp(p.IdentityRegexp))
		if err != nil {
			return nil, fmt.Errorf("%w: identity: %w", ErrPolicy, err)
		}
		v.bundlePolicy = []sgverify.PolicyOption{sgverify.WithCertificateIdentity(id)}
	}
	sev, err := sgverify.NewVerifier(trusted, vopts...)
	if err != nil {
		return nil, fmt.Errorf("%w: building the bundle verifier: %w", ErrPolicy, err)
	}
	v.cosign, v.bundle = co, sev
	return v, nil
}

// Policy is the policy the verifier enforces.
func (v *Verifier) Policy() Policy { return v.policy }

// Lock checks the lock's Sigstore bundle against the policy, then parses
// the lock and checks it names the signer the policy trusts.
func (v *Verifier) Lock(lockJSON, bundleJSON []byte) (*release.Lock, LockResult, error) {
	l, lr, err := v.lock(lockJSON, bundleJSON)
	named := l
	if named == nil {
		named, _ = release.Parse(lockJSON) // for the record only: nothing acts on it
	}
	v.rec.add("lock", named, err == nil)
	return l, lr, err
}

func (v *Verifier) lock(lockJSON, bundleJSON []byte) (*release.Lock, LockResult, error) {
	if v.byKey != nil {
		return v.lockRotating(lockJSON, bundleJSON)
	}
	if len(bundleJSON) == 0 {
		return nil, LockResult{}, fmt.Errorf("%w: verifying the release lock: no signature bundle", ErrUntrusted)
	}
	vr, err := v.verifyBundle(bundleJSON, sgverify.WithArtifact(bytes.NewReader(lockJSON)))
	if err != nil {
		return nil, LockResult{}, fmt.Errorf("verifying the release lock's signature: %w", err)
	}
	l, err := release.Parse(lockJSON)
	if err != nil {
		// Signed but not a valid lock: still nothing to act on.
		return nil, LockResult{}, fmt.Errorf("%w: %w", ErrUntrusted, err)
	}
	if err := v.policy.MatchesSigner(l.Signer); err != nil {
		return nil, LockResult{}, fmt.Errorf("release lock %s: %w", l.Version, err)
	}
	if err := v.policy.Expect.Check(l); err != nil {
		return nil, LockResult{}, err
	}
	bound, warning, err := v.policy.checkCertificateSource(l, vr)
	if err != nil {
		return nil, LockResult{}, err
	}
	var warnings []string
	if warning != "" {
		warnings = append(warnings, warning)
	}
	if v.policy.RequireScan && !l.Scanned() {
		return nil, LockResult{}, fmt.Errorf("release %s: %w (its lock records no scan; allow unscanned releases explicitly to use it)", l.Version, ErrUnscanned)
	}
	scan, err := v.checkScan(l)
	if err != nil {
		return nil, LockResult{}, err
	}
	return l, LockResult{Version: l.Version, Commit: l.Commit, Signer: v.policy.Summary(), Digest: sha256Digest(lockJSON), CertificateBound: bound, Warnings: warnings, Scan: scan, TimeSource: timeSourceOf(vr)}, nil
}

// Release verifies every signature the lock lists against its subject and
// requires at least one verified signature on every image index and chart.
// It reads signature payloads through c and nothing else.
// The verdict is in the Result (see Result.Err); the error is only for a
// lock that cannot be read.
func (v *Verifier) Release(ctx context.Context, l *release.Lock, c Content) (*Result, error) {
	res, err := v.release(ctx, l, c)
	v.rec.add("release", l, err == nil && res.Err() == nil)
	return res, err
}

// release is Release unrecorded. It stays whole: it selects the subjects and
// judges each one's signatures in one pass, and split it would pass the
// half-built result between functions.
func (v *Verifier) release(ctx context.Context, l *release.Lock, c Content) (*Result, error) {
	if v.byKey != nil {
		kv, err := v.forLock(l)
		if err != nil {
			return nil, err
		}
		return kv.Release(ctx, l, c)
	}
	bySubject := map[string][]release.Artifact{}
	for _, a := range l.Artifacts {
		if Format(a) != "" && a.Subject != "" {
			bySubject[a.Subject] = append(bySubject[a.Subject], a)
		}
	}
	var subjects []release.Artifact
	seen := map[string]bool{}
	for _, a := range l.Artifacts {
		_, hasSigs := bySubject[a.Digest]
		mustSign := a.Kind == release.KindImageIndex || a.Kind == release.KindChart
		needsProvenance := v.policy.RequireProvenance && (a.Kind == release.KindImageIndex || a.Kind == release.KindImage)
		if (!mustSign && !hasSigs && !needsProvenance) || seen[a.Digest] {
			continue
		}
		seen[a.Digest] = true
		subjects = append(subjects, a)
	}
	checked := v.verifySignatures(ctx, c, subjects, bySubject)
	res := &Result{}
	for _, a := range subjects {
		sr := SubjectResult{Kind: a.Kind, Name: a.Name, Variant: a.Variant, Digest: a.Digest, Signatures: []SignatureResult{}}
		allOK, signed := true, false
		var provs [][]byte
		for _, s := range bySubject[a.Digest] {
			r := SignatureResult{Digest: s.Digest, Format: Format(s)}
			if !slices.Contains(sr.Formats, r.Format) {
				sr.Formats = append(sr.Formats, r.Format)
			}
			if o := checked[a.Digest+" "+s.Digest]; o.err != nil {
				r.Error = fmt.Sprintf("%s %s: %v", r.Format, s.Digest, o.err)
				allOK = false
			} else {
				r.Verified = true
				signed = signed || isSignature(r.Format, o.statements)
				for _, st := range o.statements {
					if st.PredicateType == provenance.PredicateType {
						provs = append(provs, st.Data)
					}
				}
				sr.Statements = append(sr.Statements, o.statements...)
			}
			sr.Signatures = append(sr.Signatures, r)
		}
		provOK := v.checkProvenance(l, a, provs, &sr)
		// Every listed signature must hold: one that fails means the
		// content is not what was signed, even if another signature holds.
		// An index or chart needs a signature of its own: an attestation
		// signs a statement about the subject (an SBOM, a provenance), not
		// the subject as the release, and cosign verify would not accept it.
		mustSign := a.Kind == release.KindImageIndex || a.Kind == release.KindChart
		if mustSign && allOK && len(sr.Signatures) > 0 && !signed {
			sr.Error = "only attestations verified: no signature of the " + string(a.Kind) + " itself"
		}
		sr.Verified = allOK && len(sr.Signatures) > 0 && provOK && (signed || !mustSign)
		res.Subjects = append(res.Subjects, sr)
	}
	return res, nil
}

// checkProvenance holds the subject's verified provenance statements to
// the lock and the policy: each must name the lock's source and commit and
// the expected builder, and be about exactly this subject; with RequireProvenance an image or index needs one.
func (v *Verifier) checkProvenance(l *release.Lock, a release.Artifact, statements [][]byte, sr *SubjectResult) bool {
	fail := func(format string, args ...any) bool {
		sr.ProvenanceError = fmt.Sprintf("provenance of %s %s %s: ", a.Kind, a.Name, a.Digest) + fmt.Sprintf(format, args...)
		return false
	}
	if len(statements) == 0 {
		if v.policy.RequireProvenance && (a.Kind == release.KindImageIndex || a.Kind == release.KindImage) {
			return fail("none signed by the release signer (allow releases without provenance explicitly to use it)")
		}
		return true
	}
	for _, raw := range statements {
		st, err := v.parseProvenance(raw)
		if err != nil {
			return fail("%v", err)
		}
		repo, commit, err := st.Source()
		if err != nil {
			return fail("%v", err)
		}
		if repo != l.Source || commit != l.Commit {
			return fail("built from %s at %s, but the lock is %s at %s", repo, commit, l.Source, l.Commit)
		}
		if len(st.Subjects) == 0 {
			return fail("names no subject")
		}
		for _, d := range st.Subjects {
			if d != a.Digest {
				return fail("is about %s, not this artifact", d)
			}
		}
		sum := st.Summary()
		// The builder is who wrote the provenance: a statement by another
		// builder (a build job that had the signing key, a fork's
		// workflow) is refused even when its signature holds.
		if want, ok := v.policy.ExpectedBuilder(l.Signer); !ok(sum.Builder) {
			return fail("written by builder %q, but the policy expects %q (--expect-builder)", sum.Builder, want)
		}
		sr.Provenance = &sum
	}
	return true
}

// verifySignature verifies every layer of the signature artifact s and
// returns the in-toto statements of those that are attestations. It reads
// and digest-checks the manifest and every layer on every call, wherever c
// reads from; the cryptographic verification of a signature artifact it
// has already verified for this subject (the read-back of a copy at its
// target meets the source's bytes again) is not repeated, because the
// digests fix every byte verified, and the same bytes under the same policy
// verify the same (see verified in parallel.go).
func (v *Verifier) verifySignature(ctx context.Context, c Content, s release.Artifact, subject string) ([]Statement, error) {
	h, err := v1.NewHash(subject)
	if err != nil {
		return nil, fmt.Errorf("subject digest: %w", err)
	}
	raw, err := c.Manifest(ctx, s)
	if err != nil {
		return nil, err
	}
	if got := sha256Digest(raw); got != s.Digest {
		return nil, fmt.Errorf("%w: signature manifest %s has digest %s", ErrUntrusted, s.Digest, got)
	}
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decoding signature manifest: %w", err)
	}
	if len(m.Layers) == 0 {
		return nil, errors.New("signature manifest has no layers")
	}
	format := Format(s)
	if format == FormatBundle && (m.Subject == nil || m.Subject.Digest.String() != subject) {
		return nil, fmt.Errorf("bundle referrer's subject is not %s", subject)
	}
	payloads := make([][]byte, len(m.Layers))
	for i, l := range m.Layers {
		if payloads[i], err = c.SmallBlob(ctx, s, l.Digest.String(), maxSignatureLayerBytes); err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		if got := sha256Digest(payloads[i]); got != l.Digest.String() {
			return nil, fmt.Errorf("%w: layer %d: content has digest %s, not %s", ErrUntrusted, i, got, l.Digest)
		}
	}
	key := verifiedKey{subject: subject, signature: s.Digest, format: format}
	if sts, ok := v.verified.Load(key); ok {
		return sts.([]Statement), nil
	}
	var sts []Statement
	// Every layer must verify: a manifest carrying one good and one forged
	// signature is not something the signer produced.
	for i, l := range m.Layers {
		payload := payloads[i]
		switch format {
		case FormatCosignSignature:
			err = v.cosignSignature(ctx, payload, l.Annotations, h)
		case FormatCosignAttestation:
			err = v.cosignAttestation(ctx, payload, h)
		case FormatBundle:
			_, err = v.verifyBundle(payload, sgverify.WithArtifactDigest("sha256", mustHex(h.Hex)))
		}
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i, err)
		}
		if pt, st := v.statement(format, payload); st != nil {
			sts = append(sts, Statement{PredicateType: pt, Data: st})
		}
	}
	v.verified.Store(key, sts)
	return sts, nil
}

// Package sign signs release artifacts. With a key (from a file: tests and
// private PKI) it writes cosign v2 signatures (.sig tags) and in-toto
// attestations (.att tags), which `cosign verify --key` checks offline, and
// Sigstore bundles attached as OCI referrers, in the Format asked for. With a
// Fulcio certificate (keyless) it writes bundles only, which carry their own
// transparency-log entry or timestamp and so verify offline against a
// trusted root. The release lock is always a Sigstore bundle (v0.3), the
// format reloader-mirror verifies.
package sign

import (
	"bytes"
	"context"
	"crypto"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v2/pkg/cosign/attestation"
	"github.com/sigstore/cosign/v2/pkg/oci"
	"github.com/sigstore/cosign/v2/pkg/oci/mutate"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/cosign/v2/pkg/types"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/dsse"
	sigopts "github.com/sigstore/sigstore/pkg/signature/options"
	"github.com/sigstore/sigstore/pkg/signature/payload"

	"github.com/reloader-dev/reloader/release"
)

// Signer signs artifacts.
type Signer struct {
	sv signature.SignerVerifier
	// cert is the PEM certificate of a keyless signer.
	cert     []byte
	notAfter time.Time
	identity release.Signer
	// bundleOpts carry the certificate, log and timestamp authorities of
	// Sigstore bundles (keyless); zero for keys.
	bundleOpts  sign.BundleOptions
	timestamper Timestamper
}

// Identity is what verifiers must expect of this signer.
func (s *Signer) Identity() release.Signer { return s.identity }

// KeyOptions configures a key-based signer.
type KeyOptions struct {
	// PrivateKeyPath is a cosign-format (encrypted PEM) private key.
	PrivateKeyPath string
	// Password decrypts it; cosign uses COSIGN_PASSWORD for the same.
	Password []byte
}

// FromKey loads a key-based signer from a cosign private key file.
func FromKey(opts KeyOptions) (*Signer, error) {
	pemKey, err := os.ReadFile(opts.PrivateKeyPath)
	if err != nil {
		return nil, fmt.Errorf("loading the signing key: %w", err)
	}
	sv, err := cosign.LoadPrivateKey(pemKey, opts.Password, nil)
	if err != nil {
		return nil, fmt.Errorf("loading the signing key %s: %w", opts.PrivateKeyPath, err)
	}
	s, err := FromSignerVerifier(sv)
	if err != nil {
		return nil, fmt.Errorf("loading the signing key %s: %w", opts.PrivateKeyPath, err)
	}
	return s, nil
}

// FromSignerVerifier is a key-based signer for a key held anywhere (a
// PKCS#11 token, a KMS: see publish/signkey); the lock names its public key
// as the signer.
func FromSignerVerifier(sv signature.SignerVerifier) (*Signer, error) {
	pub, err := sv.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("reading the signing key's public key: %w", err)
	}
	pubPEM, err := cryptoutils.MarshalPublicKeyToPEM(pub)
	if err != nil {
		return nil, fmt.Errorf("encoding the signing key's public key: %w", err)
	}
	return &Signer{sv: sv, identity: release.Signer{PublicKey: string(pubPEM)}}, nil
}

// KeylessOptions configures a signer holding a Fulcio-issued certificate.
type KeylessOptions struct {
	// SignerVerifier holds the ephemeral private key the certificate is for.
	SignerVerifier signature.SignerVerifier
	// Cert is the PEM leaf certificate.
	Cert []byte
	// Identity is the certificate identity and issuer users must expect.
	Identity release.Signer
	// Bundle configures Sigstore bundles: the certificate provider
	// (returning Cert), transparency logs and timestamp authorities.
	Bundle sign.BundleOptions
	// Timestamper, if set, adds an RFC 3161 timestamp to every bundle.
	Timestamper Timestamper
}

// Keyless builds a signer from a certificate obtained from Fulcio.
func Keyless(opts KeylessOptions) (*Signer, error) {
	if opts.SignerVerifier == nil || len(opts.Cert) == 0 || opts.Bundle.CertificateProvider == nil {
		return nil, errors.New("keyless signer needs a key, its certificate and a certificate provider")
	}
	if len(opts.Bundle.TransparencyLogs) == 0 && opts.Timestamper == nil && len(opts.Bundle.TimestampAuthorities) == 0 {
		return nil, errors.New("keyless signer needs a transparency log or a timestamp authority: a short-lived certificate is only verifiable with a trusted time")
	}
	if !opts.Identity.Keyless() || opts.Identity.Issuer == "" {
		return nil, errors.New("keyless signer needs a certificate identity and OIDC issuer")
	}
	certs, err := cryptoutils.UnmarshalCertificatesFromPEM(opts.Cert)
	if err != nil {
		return nil, fmt.Errorf("keyless signer: reading its certificate: %w", err)
	}
	if len(certs) == 0 {
		return nil, errors.New("keyless signer: its certificate holds no PEM certificate")
	}
	return &Signer{sv: opts.SignerVerifier, cert: opts.Cert, notAfter: certs[0].NotAfter, identity: opts.Identity, bundleOpts: opts.Bundle, timestamper: opts.Timestamper}, nil
}

// NotAfter is when a keyless signer's certificate expires (Fulcio issues
// them for ten minutes): a signature timestamped later never verifies. It
// is the zero time for a key, which does not expire.
func (s *Signer) NotAfter() time.Time { return s.notAfter }

// GenerateKey writes a new cosign key pair (cosign.key, cosign.pub) into dir.
func GenerateKey(dir string, password []byte) (privPath, pubPath string, err error) {
	kb, err := cosign.GenerateKeyPair(func(bool) ([]byte, error) { return password, nil })
	if err != nil {
		return "", "", fmt.Errorf("generating a signing key: %w", err)
	}
	privPath, pubPath = filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
	if err := os.WriteFile(privPath, kb.PrivateBytes, 0o600); err != nil {
		return "", "", fmt.Errorf("writing the signing key: %w", err)
	}
	if err := os.WriteFile(pubPath, kb.PublicBytes, 0o644); err != nil {
		return "", "", fmt.Errorf("writing the public key: %w", err)
	}
	return privPath, pubPath, nil
}

// errKeyless: a cosign signature from a short-lived certificate without a
// transparency-log entry could not be verified later; keyless signers write
// Sigstore bundles (BundleReferrer) instead.
var errKeyless = errors.New("cosign tag signatures are for key-based signing; keyless signers write Sigstore bundles")

// Registry holds the options of every registry call.
type Registry struct {
	Remote []remote.Option
}

// DefaultRegistry uses the Docker keychain (~/.docker/config.json, helpers).
func DefaultRegistry(ctx context.Context) Registry {
	return Registry{Remote: []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}}
}

func (r Registry) oci() []ociremote.Option {
	return []ociremote.Option{ociremote.WithRemoteOptions(r.Remote...)}
}

// Manifest signs the manifest at ref (by digest) with a cosign simple-
// signing payload, optionally carrying annotations that verifiers may
// require, and stores it under the cosign signature tag.
func (s *Signer) Manifest(ctx context.Context, reg Registry, ref name.Digest, annotations map[string]interface{}) error {
	if s.Keyless() {
		return fmt.Errorf("signing %s: %w", ref, errKeyless)
	}
	pl, err := (&payload.Cosign{Image: ref, Annotations: annotations}).MarshalJSON()
	if err != nil {
		return fmt.Errorf("signing %s: building the payload: %w", ref, err)
	}
	sig, err := s.sv.SignMessage(bytes.NewReader(pl), sigopts.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("signing %s: %w", ref, err)
	}
	ociSig, err := static.NewSignature(pl, base64.StdEncoding.EncodeToString(sig))
	if err != nil {
		return fmt.Errorf("signing %s: %w", ref, err)
	}
	se, err := ociremote.SignedEntity(ref, reg.oci()...)
	if err != nil {
		return fmt.Errorf("signing %s: reading it from the registry: %w", ref, err)
	}
	se, err = mutate.AttachSignatureToEntity(se, ociSig)
	if err != nil {
		return fmt.Errorf("signing %s: %w", ref, err)
	}
	if err := ociremote.WriteSignatures(ref.Repository, se, reg.oci()...); err != nil {
		return fmt.Errorf("signing %s: writing the signature: %w", ref, err)
	}
	return nil
}

// Predicate types cosign uses for SBOM attestations (what
// `cosign verify-attestation --type spdxjson|cyclonedx` looks for).
const (
	PredicateSPDX      = "https://spdx.dev/Document"
	PredicateCycloneDX = "https://cyclonedx.org/bom"
	// PredicateSPDX3 is an SPDX 3 JSON-LD document, the in-toto predicate
	// type of spec/predicates/spdx3.md (in-toto/attestation v1.2.0);
	// cosign takes it by its URI (`--type https://spdx.dev/Document/v3`).
	PredicateSPDX3 = "https://spdx.dev/Document/v3"
	// PredicateSLSAProvenance1 is SLSA v1 build provenance
	// (`cosign verify-attestation --type slsaprovenance1`).
	PredicateSLSAProvenance1 = "https://slsa.dev/provenance/v1"
	// PredicateOpenVEX is an OpenVEX document
	// (`cosign verify-attestation --type openvex`).
	PredicateOpenVEX = "https://openvex.dev/ns"
)

// cosignType maps a predicate type URI to cosign's short name.
func cosignType(predicateType string) (string, error) {
	switch predicateType {
	case PredicateSPDX:
		return "spdxjson", nil
	case PredicateCycloneDX:
		return "cyclonedx", nil
	case PredicateSLSAProvenance1:
		return "slsaprovenance1", nil
	case PredicateOpenVEX:
		return "openvex", nil
	}
	// Any other predicate cosign takes by its URI (--type URI), as JSON.
	if strings.HasPrefix(predicateType, "https://") {
		return predicateType, nil
	}
	return "", fmt.Errorf("no cosign predicate type for %q", predicateType)
}

// Attest wraps predicate in an in-toto statement about ref, signs it as a
// DSSE envelope and attaches it under the cosign attestation tag. An
// attestation of the same predicate type replaces the earlier one, so a
// re-run does not pile up SBOMs.
func (s *Signer) Attest(ctx context.Context, reg Registry, ref name.Digest, predicateType string, predicate []byte) error {
	if s.Keyless() {
		return fmt.Errorf("attesting %s: %w", ref, errKeyless)
	}
	typ, err := cosignType(predicateType)
	if err != nil {
		return fmt.Errorf("attesting %s: %w", ref, err)
	}
	stmt, err := attestation.GenerateStatement(attestation.GenerateOpts{
		Predicate: bytes.NewReader(predicate), Type: typ,
		Digest: digestHex(ref), Repo: ref.Repository.String(),
	})
	if err != nil {
		return fmt.Errorf("attesting %s: building the %s statement: %w", ref, typ, err)
	}
	pl, err := json.Marshal(stmt)
	if err != nil {
		return fmt.Errorf("attesting %s: %w", ref, err)
	}
	wrapped := dsse.WrapSigner(s.sv, types.IntotoPayloadType)
	env, err := wrapped.SignMessage(bytes.NewReader(pl), sigopts.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("attesting %s: signing: %w", ref, err)
	}
	att, err := static.NewAttestation(env, static.WithLayerMediaType(types.DssePayloadType),
		static.WithAnnotations(map[string]string{"predicateType": predicateType}))
	if err != nil {
		return fmt.Errorf("attesting %s: %w", ref, err)
	}
	se, err := ociremote.SignedEntity(ref, reg.oci()...)
	if err != nil {
		return fmt.Errorf("attesting %s: reading it from the registry: %w", ref, err)
	}
	se, err = mutate.AttachAttestationToEntity(se, att, mutate.WithReplaceOp(replacePredicate{predicateType}))
	if err != nil {
		return fmt.Errorf("attesting %s: %w", ref, err)
	}
	if err := ociremote.WriteAttestations(ref.Repository, se, reg.oci()...); err != nil {
		return fmt.Errorf("attesting %s: writing the attestation: %w", ref, err)
	}
	return nil
}

func digestHex(ref name.Digest) string {
	_, hex, _ := bytes.Cut([]byte(ref.DigestStr()), []byte(":"))
	return string(hex)
}

// PublicKey returns the signer's public key (key-based signers).
func (s *Signer) PublicKey() (crypto.PublicKey, error) { return s.sv.PublicKey() }

// replacePredicate drops earlier attestations of the same predicate type
// when a new one is attached (cosign's own ReplaceOp does the same but
// prints to stderr for every layer).
type replacePredicate struct{ predicateType string }

func (r replacePredicate) Replace(existing oci.Signatures, att oci.Signature) (oci.Signatures, error) {
	sigs, err := existing.Get()
	if err != nil {
		return nil, err
	}
	keep := []oci.Signature{att}
	for _, s := range sigs {
		ann, err := s.Annotations()
		if err != nil {
			return nil, err
		}
		if ann["predicateType"] != r.predicateType {
			keep = append(keep, s)
		}
	}
	return replaced{Signatures: existing, sigs: keep}, nil
}

type replaced struct {
	oci.Signatures
	sigs []oci.Signature
}

func (r replaced) Get() ([]oci.Signature, error) { return r.sigs, nil }

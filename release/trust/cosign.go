package trust

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/cosign/v2/pkg/oci"
	ociremote "github.com/sigstore/cosign/v2/pkg/oci/remote"
	"github.com/sigstore/cosign/v2/pkg/oci/static"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
)

func (v *Verifier) cosignSignature(ctx context.Context, payload []byte, ann map[string]string, h v1.Hash) error {
	b64 := ann[cosignSignatureAnnot]
	if b64 == "" {
		return errors.New("no signature annotation")
	}
	var opts []static.Option
	if cert := ann[cosignCertAnnot]; cert != "" {
		opts = append(opts, static.WithCertChain([]byte(cert), []byte(ann[cosignChainAnnot])))
	}
	sig, err := static.NewSignature(payload, b64, opts...)
	if err != nil {
		return fmt.Errorf("reading cosign signature: %w", err)
	}
	if _, err := cosign.VerifyImageSignature(ctx, sig, h, v.cosign); err != nil {
		return fmt.Errorf("cosign: %w", err)
	}
	return nil
}

func (v *Verifier) cosignAttestation(ctx context.Context, payload []byte, h v1.Hash) error {
	att, err := static.NewAttestation(payload)
	if err != nil {
		return fmt.Errorf("reading cosign attestation: %w", err)
	}
	co := *v.cosign
	co.ClaimVerifier = v.subjectClaimVerifier
	if _, err := cosign.VerifyBlobAttestation(ctx, att, h, &co); err != nil {
		return fmt.Errorf("cosign attestation: %w", err)
	}
	return nil
}

// subjectClaimVerifier is cosign's IntotoSubjectClaimVerifier (the
// attestation must be about the image: one of its subjects has the image's
// sha256), decoding only the subjects and the predicate type. cosign's
// decodes the whole statement, predicate included, into maps: for an SBOM
// attestation, megabytes of JSON and most of a release's verification time.
// encoding/json matches the same keys either way (case-insensitively, the
// last of a repeated key), so the verdict is the same on every payload
// (TestSubjectClaimVerifierAgreesWithCosigns). The statement it decoded from
// the verified envelope is kept, so the Verifier's statement finds it
// instead of decoding the envelope again.
func (v *Verifier) subjectClaimVerifier(sig oci.Signature, imageDigest v1.Hash, _ map[string]interface{}) error {
	p, err := sig.Payload()
	if err != nil {
		return err
	}
	pt, st, err := subjectClaim(p, imageDigest)
	if err != nil {
		return err
	}
	v.statements.Store(parsedKey{FormatCosignAttestation, sha256.Sum256(p)}, parsedStatement{pt, st})
	return nil
}

// subjectClaim checks the claim of the DSSE envelope p (whose signature was
// verified before) and returns its statement and predicate type, as
// InTotoStatement would ("" when the statement names none).
func subjectClaim(p []byte, imageDigest v1.Hash) (predicateType string, statement []byte, err error) {
	var env struct {
		Payload string `json:"payload"`
	}
	if err := json.Unmarshal(p, &env); err != nil {
		return "", nil, err
	}
	st, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return "", nil, err
	}
	var claim struct {
		PredicateType string `json:"predicateType"`
		Subject       []struct {
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
	}
	if err := json.Unmarshal(st, &claim); err != nil {
		return "", nil, err
	}
	for _, s := range claim.Subject {
		if d, ok := s.Digest["sha256"]; ok && "sha256:"+d == imageDigest.String() {
			if claim.PredicateType == "" {
				return "", nil, nil
			}
			return claim.PredicateType, st, nil
		}
	}
	return "", nil, errors.New("no matching subject digest found")
}

func (v *Verifier) verifyBundle(bundleJSON []byte, artifact sgverify.ArtifactPolicyOption) (*sgverify.VerificationResult, error) {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(bundleJSON); err != nil {
		return nil, fmt.Errorf("%w: parsing Sigstore bundle: %w", ErrUntrusted, err)
	}
	res, err := v.bundle.Verify(&b, sgverify.NewPolicy(artifact, v.bundlePolicy...))
	if err != nil {
		if gap := v.policy.missingTimeSource(&b); gap != "" {
			return nil, fmt.Errorf("%w: sigstore bundle: %s: %w", ErrUntrusted, gap, err)
		}
		return nil, fmt.Errorf("%w: sigstore bundle: %w", ErrUntrusted, err)
	}
	return res, nil
}

func mustHex(s string) []byte {
	b, _ := hex.DecodeString(s)
	return b
}

func sha256Digest(b []byte) string {
	h, _, _ := v1.SHA256(bytes.NewReader(b))
	return h.String()
}

// remoteOpts is the verifier's cosign configuration reading signatures
// from a registry (still offline for every Sigstore service).
func (v *Verifier) remoteOpts(ctx context.Context, ropts []remote.Option) *cosign.CheckOpts {
	co := *v.cosign
	co.RegistryClientOpts = []ociremote.Option{ociremote.WithRemoteOptions(append([]remote.Option{remote.WithContext(ctx)}, ropts...)...)}
	return &co
}

// ImageSignatures verifies the cosign signatures (the .sig tag) of ref in
// its registry, as `cosign verify` does, offline.
func (v *Verifier) ImageSignatures(ctx context.Context, ref name.Digest, ropts []remote.Option) error {
	if v.byKey != nil {
		return v.imageSignaturesRotating(ctx, ref, ropts)
	}
	if _, _, err := cosign.VerifyImageSignatures(ctx, ref, v.remoteOpts(ctx, ropts)); err != nil {
		return fmt.Errorf("%w: signature does not verify against the expected signer: %w", ErrUntrusted, err)
	}
	return nil
}

// ImageAttestations verifies the cosign attestations (the .att tag) of ref
// in its registry and returns their DSSE payloads.
func (v *Verifier) ImageAttestations(ctx context.Context, ref name.Digest, ropts []remote.Option) ([][]byte, error) {
	if v.byKey != nil {
		return v.imageAttestationsRotating(ctx, ref, ropts)
	}
	co := v.remoteOpts(ctx, ropts)
	co.ClaimVerifier = cosign.IntotoSubjectClaimVerifier
	atts, _, err := cosign.VerifyImageAttestations(ctx, ref, co)
	if err != nil {
		return nil, fmt.Errorf("%w: attestations do not verify against the expected signer: %w", ErrUntrusted, err)
	}
	var out [][]byte
	for _, a := range atts {
		pl, err := a.Payload()
		if err != nil {
			return nil, fmt.Errorf("reading an attestation: %w", err)
		}
		out = append(out, pl)
	}
	return out, nil
}

package sign

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
	sigopts "github.com/sigstore/sigstore/pkg/signature/options"
	"google.golang.org/protobuf/encoding/protojson"
)

// Blob signs data (the release lock) into a Sigstore bundle (v0.3 JSON):
// the format reloader-mirror verifies and `cosign verify-blob
// --new-bundle-format --bundle` reads.
func (s *Signer) Blob(ctx context.Context, data []byte) ([]byte, error) {
	b, err := s.bundle(ctx, &sign.PlainData{Data: data})
	if err != nil {
		return nil, fmt.Errorf("signing blob: %w", err)
	}
	return b, nil
}

// keypair adapts the signer's key to sigstore-go. Only ECDSA P-256 with
// SHA-256 is accepted: it is what cosign generates and what the mirror's
// verification expects.
func (s *Signer) keypair() (sign.Keypair, error) { return Keypair(s.sv) }

// Keypair adapts a sigstore SignerVerifier holding an ECDSA P-256 key to
// sigstore-go's Keypair (for Fulcio's proof of possession and bundles).
func Keypair(sv signature.SignerVerifier) (sign.Keypair, error) {
	if sv == nil {
		return nil, errors.New("no signing key")
	}
	pub, err := sv.PublicKey()
	if err != nil {
		return nil, err
	}
	ec, ok := pub.(*ecdsa.PublicKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("signing key is %T, only ECDSA P-256 is supported", pub)
	}
	return keypair{sv: sv, pub: ec}, nil
}

type keypair struct {
	sv  signature.SignerVerifier
	pub *ecdsa.PublicKey
}

func (k keypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}
func (k keypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}

// GetHint is the base64 SHA-256 of the public key (what cosign uses).
func (k keypair) GetHint() []byte {
	der, err := x509.MarshalPKIXPublicKey(k.pub)
	if err != nil {
		return nil
	}
	sum := sha256.Sum256(der)
	return []byte(base64.StdEncoding.EncodeToString(sum[:]))
}
func (k keypair) GetKeyAlgorithm() string        { return "ECDSA" }
func (k keypair) GetPublicKey() crypto.PublicKey { return k.pub }
func (k keypair) GetPublicKeyPem() (string, error) {
	b, err := cryptoutils.MarshalPublicKeyToPEM(k.pub)
	return string(b), err
}
func (k keypair) SignData(ctx context.Context, data []byte) ([]byte, []byte, error) {
	sum := sha256.Sum256(data)
	sig, err := k.sv.SignMessage(bytes.NewReader(data), sigopts.WithContext(ctx))
	return sig, sum[:], err
}

func pbJSON(b *protobundle.Bundle) ([]byte, error) { return protojson.Marshal(b) }

package releasetest

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/go-openapi/swag/conv"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/rekor/pkg/generated/models"
	"github.com/sigstore/rekor/pkg/types"
	hashedrekord "github.com/sigstore/rekor/pkg/types/hashedrekord/v0.0.1"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
)

// virtualRekor is a transparency log for sigstore-go's signer backed by a
// VirtualSigstore's log key: where the product's keyless signer asks public
// Rekor (sign.NewRekor), a test release asks this, and the bundles carry
// entries that verify against the VirtualSigstore's trusted root. Envelopes
// get a dsse entry with an inclusion proof, message signatures (the lock) a
// hashedrekord entry; both with a signed entry timestamp and an inclusion proof, as Rekor v1 gives.
type virtualRekor struct{ vs *ca.VirtualSigstore }

func (v virtualRekor) GetTransparencyLogEntry(ctx context.Context, certPEM []byte, b *protobundle.Bundle) error {
	blk, _ := pem.Decode(certPEM)
	if blk == nil {
		return errors.New("virtual rekor: the signer gave no PEM certificate")
	}
	leaf, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return fmt.Errorf("virtual rekor: %w", err)
	}
	now := time.Now()
	var entry *tlog.Entry
	switch {
	case b.GetDsseEnvelope() != nil:
		pe := b.GetDsseEnvelope()
		env := &dsse.Envelope{PayloadType: pe.PayloadType, Payload: base64.StdEncoding.EncodeToString(pe.Payload)}
		for _, s := range pe.Signatures {
			env.Signatures = append(env.Signatures, dsse.Signature{KeyID: s.Keyid, Sig: base64.StdEncoding.EncodeToString(s.Sig)})
		}
		if entry, err = v.vs.GenerateTlogEntry(leaf, env, pe.Signatures[0].Sig, now.Unix(), true); err != nil {
			return fmt.Errorf("virtual rekor: dsse entry: %w", err)
		}
	case b.GetMessageSignature() != nil:
		if entry, err = v.hashedRekord(ctx, certPEM, b.GetMessageSignature().GetMessageDigest().GetDigest(), b.GetMessageSignature().GetSignature(), now); err != nil {
			return err
		}
	default:
		return errors.New("virtual rekor: the bundle has no content")
	}
	tle := entry.TransparencyLogEntry()
	if tle.KindVersion == nil {
		var kv struct {
			Kind       string `json:"kind"`
			APIVersion string `json:"apiVersion"`
		}
		if err := json.Unmarshal(tle.CanonicalizedBody, &kv); err != nil {
			return fmt.Errorf("virtual rekor: reading the entry's kind: %w", err)
		}
		tle.KindVersion = &protorekor.KindVersion{Kind: kv.Kind, Version: kv.APIVersion}
	}
	// A trusted_root.json written from a VirtualSigstore names its log by
	// the bytes of the hex log ID, so the entry must too.
	tle.LogId.KeyId = []byte(hex.EncodeToString(tle.LogId.KeyId))
	{
		// The entry's proto form drops the signed entry timestamp, and the
		// log ID changed form: the log signs it again over the payload.
		set, err := v.vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
			IntegratedTime: tle.IntegratedTime, LogIndex: tle.LogIndex, LogID: hex.EncodeToString(tle.LogId.KeyId)})
		if err != nil {
			return fmt.Errorf("virtual rekor: signing the entry timestamp: %w", err)
		}
		tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
	}
	b.VerificationMaterial.TlogEntries = append(b.VerificationMaterial.TlogEntries, tle)
	return nil
}

// hashedRekord makes the log entry Rekor v1 makes for a message signature.
func (v virtualRekor) hashedRekord(ctx context.Context, certPEM, digest, sig []byte, now time.Time) (*tlog.Entry, error) {
	e := &hashedrekord.V001Entry{HashedRekordObj: models.HashedrekordV001Schema{
		Data: &models.HashedrekordV001SchemaData{Hash: &models.HashedrekordV001SchemaDataHash{
			Algorithm: conv.Pointer(models.HashedrekordV001SchemaDataHashAlgorithmSha256), Value: conv.Pointer(hex.EncodeToString(digest))}},
		Signature: &models.HashedrekordV001SchemaSignature{Content: strfmt.Base64(sig),
			PublicKey: &models.HashedrekordV001SchemaSignaturePublicKey{Content: strfmt.Base64(certPEM)}},
	}}
	body, err := types.CanonicalizeEntry(ctx, e)
	if err != nil {
		return nil, fmt.Errorf("virtual rekor: hashedrekord entry: %w", err)
	}
	logID, err := v.vs.RekorLogID()
	if err != nil {
		return nil, err
	}
	rawID, err := hex.DecodeString(logID)
	if err != nil {
		return nil, err
	}
	// The inclusion proof VirtualSigstore makes is for a one-entry tree.
	const logIndex = 0
	set, err := v.vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(body),
		IntegratedTime: now.Unix(), LogIndex: logIndex, LogID: logID})
	if err != nil {
		return nil, fmt.Errorf("virtual rekor: signing the entry timestamp: %w", err)
	}
	proof, err := v.vs.GetInclusionProof(body)
	if err != nil {
		return nil, fmt.Errorf("virtual rekor: inclusion proof: %w", err)
	}
	//lint:ignore SA1019 a Rekor v1 entry is what VirtualSigstore's own log writes, and NewEntry is its constructor
	return tlog.NewEntry(body, now.Unix(), logIndex, rawID, set, proof)
}

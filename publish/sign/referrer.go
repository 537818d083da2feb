package sign

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/sign"

	"github.com/reloader-dev/reloader/publish/internal/artifact"
	"github.com/reloader-dev/reloader/release"
)

// PredicateCosignSign is the predicate of a plain signature statement, as
// `cosign sign --new-bundle-format` writes it (release.PredicateCosignSign).
const PredicateCosignSign = release.PredicateCosignSign

// Timestamper returns an RFC 3161 signed timestamp over a signature. A
// keyless signer without a transparency log (a private Sigstore, or tests
// with a virtual one) anchors certificate validity to it.
type Timestamper interface {
	Timestamp(ctx context.Context, signature []byte) ([]byte, error)
}

// Keyless reports whether the signer holds a certificate (Sigstore
// bundles) rather than a key (cosign .sig/.att tags).
func (s *Signer) Keyless() bool { return s.cert != nil }

// BundleReferrer signs an in-toto statement about subject with
// predicateType and predicate (JSON) into a Sigstore bundle and attaches it
// to the subject as an OCI referrer: the format reloader-mirror and
// `cosign verify --new-bundle-format` verify. It returns the referrer's
// descriptor and annotations.
func (s *Signer) BundleReferrer(ctx context.Context, reg Registry, subject name.Digest, subjectDesc v1.Descriptor, predicateType string, predicate []byte) (v1.Descriptor, map[string]string, error) {
	if len(predicate) == 0 {
		predicate = []byte("{}")
	}
	stmt, err := json.Marshal(map[string]any{
		"_type":         "https://in-toto.io/Statement/v1",
		"subject":       []map[string]any{{"name": subject.Repository.String(), "digest": map[string]string{"sha256": subjectDesc.Digest.Hex}}},
		"predicateType": predicateType,
		"predicate":     json.RawMessage(predicate),
	})
	if err != nil {
		return v1.Descriptor{}, nil, fmt.Errorf("signing %s: building the statement: %w", subject, err)
	}
	b, err := s.bundle(ctx, &sign.DSSEData{Data: stmt, PayloadType: "application/vnd.in-toto+json"})
	if err != nil {
		return v1.Descriptor{}, nil, fmt.Errorf("signing %s as a Sigstore bundle: %w", subject, err)
	}
	ann := map[string]string{"dev.sigstore.bundle.predicateType": predicateType, "dev.sigstore.bundle.content": "dsse-envelope"}
	art := artifact.Artifact{ArtifactType: release.BundleMediaType, Layers: []artifact.Blob{{MediaType: release.BundleMediaType, Data: b}},
		Annotations: ann, Subject: &subjectDesc}
	desc, err := art.Push(ctx, subject.Repository, "", reg.Remote...)
	if err != nil {
		return v1.Descriptor{}, nil, fmt.Errorf("signing %s: %w", subject, err)
	}
	return desc, ann, nil
}

// bundle signs content into Sigstore bundle JSON with the signer's key or
// certificate, transparency logs and timestamps.
func (s *Signer) bundle(ctx context.Context, content sign.Content) ([]byte, error) {
	kp, err := s.keypair()
	if err != nil {
		return nil, err
	}
	opts := s.bundleOpts
	opts.Context = ctx
	pb, err := sign.Bundle(content, kp, opts)
	if err != nil {
		return nil, err
	}
	if s.timestamper != nil {
		sig := pb.GetMessageSignature().GetSignature()
		if env := pb.GetDsseEnvelope(); env != nil {
			sig = env.GetSignatures()[0].GetSig()
		}
		ts, err := s.timestamper.Timestamp(ctx, sig)
		if err != nil {
			return nil, fmt.Errorf("timestamping: %w", err)
		}
		if pb.VerificationMaterial.TimestampVerificationData == nil {
			pb.VerificationMaterial.TimestampVerificationData = &protobundle.TimestampVerificationData{}
		}
		tvd := pb.VerificationMaterial.TimestampVerificationData
		tvd.Rfc3161Timestamps = append(tvd.Rfc3161Timestamps, &protocommon.RFC3161SignedTimestamp{SignedTimestamp: ts})
	}
	return pbJSON(pb)
}

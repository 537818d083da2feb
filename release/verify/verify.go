// Package verify checks a release the way its users do: the lock's
// signature against the signer they expect, then every artifact the lock
// lists, by digest, offline. Signatures are verified by the trust package
// (release/trust), as reloader-mirror verifies them; this package adds the
// content checks: manifest digests, sizes and media types, every blob, and
// that each SBOM is attested with exactly its content. It is the release
// pipeline's last gate and the code behind `reloader-release verify`.
package verify

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/scancheck"
	"github.com/reloader-dev/reloader/release/trust"
)

// Lock verifies the lock's Sigstore bundle against the expected signer and
// that the lock names that signer, then parses it.
func Lock(ctx context.Context, lockBytes, bundleBytes []byte, opts Options) (*release.Lock, error) {
	l, _, err := SignedLock(ctx, lockBytes, bundleBytes, opts)
	return l, err
}

// SignedLock is Lock with what its verification established (the signer,
// the lock's digest, the time source of a keyless signature), for a caller
// that reports it as reloader-mirror verify does.
func SignedLock(_ context.Context, lockBytes, bundleBytes []byte, opts Options) (*release.Lock, trust.LockResult, error) {
	v, err := opts.Verifier()
	if err != nil {
		return nil, trust.LockResult{}, fmt.Errorf("verifying the release lock: %w", err)
	}
	l, lr, err := v.Lock(lockBytes, bundleBytes)
	if errors.Is(err, scancheck.ErrRefused) {
		// Signed as expected; what it says about its scan fails today.
		return nil, trust.LockResult{}, fmt.Errorf("checking the release lock's scan record: %w", err)
	}
	if err != nil {
		return nil, trust.LockResult{}, fmt.Errorf("verifying the release lock: its signature does not verify against the expected signer (was it modified?): %w", err)
	}
	return l, lr, nil
}

// Result lists what was checked.
type Result struct {
	// Checked holds one line per verified artifact.
	Checked []string
}

// Artifacts verifies every artifact of the lock against the registry.
// Errors of all artifacts are collected, so one run names every problem.
func Artifacts(ctx context.Context, l *release.Lock, opts Options) (Result, error) {
	v, err := opts.Verifier()
	if err != nil {
		return Result{}, err
	}
	var res Result
	var errs []error
	ropts := append([]remote.Option{remote.WithContext(ctx)}, opts.Remote...)
	// First what reloader-mirror checks before it copies anything: every
	// signature the lock lists, in its own format, against the policy.
	mres, err := v.Release(ctx, l, content{ropts})
	if err != nil {
		return Result{}, fmt.Errorf("verifying the signatures of release %s: %w", l.Version, err)
	}
	if err := mres.Err(); err != nil {
		errs = append(errs, fmt.Errorf("signatures (as reloader-mirror verifies them): %w", err))
	}
	for _, a := range l.Artifacts {
		what := describe(a)
		if err := artifact(ctx, l, a, v, ropts); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
			continue
		}
		res.Checked = append(res.Checked, "ok  "+what)
	}
	if len(errs) > 0 {
		return res, fmt.Errorf("release %s failed verification:\n%w", l.Version, errors.Join(errs...))
	}
	return res, nil
}

func describe(a release.Artifact) string {
	s := string(a.Kind) + " " + a.Name
	if a.Platform != "" {
		s += " " + a.Platform
	}
	if a.PredicateType != "" {
		s += " (" + a.PredicateType + ")"
	} else if a.ArtifactType != "" {
		s += " (" + a.ArtifactType + ")"
	}
	return s + " " + a.Repository + "@" + a.Digest
}

func artifact(ctx context.Context, l *release.Lock, a release.Artifact, v *trust.Verifier, ropts []remote.Option) error {
	ref, err := name.NewDigest(a.Repository + "@" + a.Digest)
	if err != nil {
		return fmt.Errorf("not a valid reference: %w", err)
	}
	// Fetching by digest makes go-containerregistry check the manifest
	// bytes against the digest.
	desc, err := remote.Get(ref, ropts...)
	if err != nil {
		return fmt.Errorf("fetching the manifest: %w", err)
	}
	if desc.Size != a.Size || string(desc.MediaType) != a.MediaType {
		return fmt.Errorf("%w: manifest is %d bytes of %s, the lock says %d bytes of %s", trust.ErrUntrusted, desc.Size, desc.MediaType, a.Size, a.MediaType)
	}
	switch a.Kind {
	case release.KindImageIndex:
		idx, err := desc.ImageIndex()
		if err != nil {
			return fmt.Errorf("reading the index: %w", err)
		}
		if err := indexChildrenInLock(l, a, idx); err != nil {
			return err
		}
		return signed(ctx, l, a, ref, v, ropts)
	case release.KindImage:
		img, err := desc.Image()
		if err != nil {
			return fmt.Errorf("reading the image: %w", err)
		}
		if err := blobsMatch(ref, desc.Manifest, ropts); err != nil {
			return err
		}
		// Also the uncompressed layers against the config's diff ids.
		if err := validate.Image(img); err != nil {
			return fmt.Errorf("%w: image content does not match its digests (a layer or the config was altered): %w", trust.ErrUntrusted, err)
		}
		if err := signed(ctx, l, a, ref, v, ropts); err != nil {
			return err
		}
		return attested(ctx, l, a, ref, v, ropts)
	case release.KindChart, release.KindSBOM:
		if err := blobsMatch(ref, desc.Manifest, ropts); err != nil {
			return err
		}
		return signed(ctx, l, a, ref, v, ropts)
	case release.KindSignature, release.KindAttestation:
		// Their content is checked with their subject (signed/attested);
		// here only that the registry still serves exactly these bytes.
		return blobsMatch(ref, desc.Manifest, ropts)
	}
	return fmt.Errorf("unknown artifact kind %q", a.Kind)
}

func indexChildrenInLock(l *release.Lock, a release.Artifact, idx v1.ImageIndex) error {
	im, err := idx.IndexManifest()
	if err != nil {
		return fmt.Errorf("reading the index: %w", err)
	}
	for _, d := range im.Manifests {
		found := false
		for _, c := range l.Artifacts {
			if c.Kind == release.KindImage && c.Repository == a.Repository && c.Digest == d.Digest.String() {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%w: index refers to %s, which is not an image of the release", trust.ErrUntrusted, d.Digest)
		}
	}
	return nil
}

// blobsMatch reads every blob the manifest refers to and checks its digest.
func blobsMatch(ref name.Digest, raw []byte, ropts []remote.Option) error {
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("reading the manifest: %w", err)
	}
	for _, d := range append([]v1.Descriptor{m.Config}, m.Layers...) {
		l, err := remote.Layer(ref.Context().Digest(d.Digest.String()), ropts...)
		if err != nil {
			return fmt.Errorf("fetching blob %s: %w", d.Digest, err)
		}
		rc, err := l.Compressed()
		if err != nil {
			return fmt.Errorf("fetching blob %s: %w", d.Digest, err)
		}
		h, n, err := v1.SHA256(rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("%w: blob %s was altered: the registry serves content that does not match its digest: %w", trust.ErrUntrusted, d.Digest, err)
		}
		if h != d.Digest || n != d.Size {
			return fmt.Errorf("%w: blob %s was altered: the registry serves %d bytes with digest %s", trust.ErrUntrusted, d.Digest, n, h)
		}
	}
	return nil
}

// signed requires a signature in the lock for the artifact and checks the
// cosign-format one with cosign; Sigstore bundle referrers were verified
// by reloader-mirror's code in Artifacts.
func signed(ctx context.Context, l *release.Lock, a release.Artifact, ref name.Digest, v *trust.Verifier, ropts []remote.Option) error {
	cosignSig, any := false, false
	for _, s := range l.Artifacts {
		if s.Kind == release.KindSignature && s.Subject == a.Digest {
			any = true
			cosignSig = cosignSig || trust.Format(s) == trust.FormatCosignSignature
		}
	}
	if !any {
		return fmt.Errorf("%w: the lock lists no signature for it", trust.ErrUntrusted)
	}
	if !cosignSig {
		return nil
	}
	return v.ImageSignatures(ctx, ref, ropts)
}

// statement is the part of an in-toto statement we compare.
type statement struct {
	PredicateType string `json:"predicateType"`
	Subject       []struct {
		Digest map[string]string `json:"digest"`
	} `json:"subject"`
	Predicate json.RawMessage `json:"predicate"`
}

// attested checks that each SBOM the lock lists for this image is attested
// by the expected signer with exactly the SBOM's content.
func attested(ctx context.Context, l *release.Lock, img release.Artifact, ref name.Digest, v *trust.Verifier, ropts []remote.Option) error {
	var sboms []release.Artifact
	for _, a := range l.Artifacts {
		if a.Kind == release.KindSBOM && a.Subject == img.Digest {
			sboms = append(sboms, a)
		}
	}
	if len(sboms) == 0 {
		return nil
	}
	statements := map[string]json.RawMessage{}
	for _, att := range l.Artifacts {
		if att.Kind != release.KindAttestation || att.Subject != img.Digest {
			continue
		}
		var envs [][]byte
		switch trust.Format(att) {
		case trust.FormatCosignAttestation:
			pls, err := v.ImageAttestations(ctx, ref, ropts)
			if err != nil {
				return fmt.Errorf("SBOM attestations: %w", err)
			}
			envs = append(envs, pls...)
		case trust.FormatBundle:
			// Its signature was verified by reloader-mirror's code.
			b, err := singleLayer(att, ropts)
			if err != nil {
				return fmt.Errorf("attestation %s: %w", att.Digest, err)
			}
			var bundle struct {
				DSSEEnvelope json.RawMessage `json:"dsseEnvelope"`
			}
			if err := json.Unmarshal(b, &bundle); err != nil || len(bundle.DSSEEnvelope) == 0 {
				return fmt.Errorf("%w: attestation %s is not a DSSE bundle", trust.ErrUntrusted, att.Digest)
			}
			envs = append(envs, bundle.DSSEEnvelope)
		default:
			return fmt.Errorf("%w: attestation %s has an unknown format", trust.ErrUntrusted, att.Digest)
		}
		for _, e := range envs {
			st, err := decodeStatement(e)
			if err != nil {
				return err
			}
			if len(st.Subject) != 1 || "sha256:"+st.Subject[0].Digest["sha256"] != img.Digest {
				return fmt.Errorf("%w: a %s attestation is about another subject", trust.ErrUntrusted, st.PredicateType)
			}
			statements[st.PredicateType] = st.Predicate
		}
	}
	for _, s := range sboms {
		pred, ok := statements[s.PredicateType]
		if !ok {
			return fmt.Errorf("%w: no verified %s attestation for the SBOM %s", trust.ErrUntrusted, s.PredicateType, s.Digest)
		}
		doc, err := singleLayer(s, ropts)
		if err != nil {
			return fmt.Errorf("SBOM %s: %w", s.Digest, err)
		}
		if !sameJSON(doc, pred) {
			return fmt.Errorf("%w: the attested %s SBOM differs from the published SBOM %s", trust.ErrUntrusted, s.PredicateType, s.Digest)
		}
	}
	return nil
}

func decodeStatement(envelope []byte) (*statement, error) {
	var env struct {
		Payload string `json:"payload"`
	}
	if err := json.Unmarshal(envelope, &env); err != nil {
		return nil, fmt.Errorf("reading an attestation envelope: %w", err)
	}
	b, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, fmt.Errorf("reading an attestation statement: %w", err)
	}
	var st statement
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("reading an attestation statement: %w", err)
	}
	return &st, nil
}

// singleLayer returns the only layer of a one-layer artifact (an SBOM
// document, a bundle), checked against its digest.
func singleLayer(a release.Artifact, ropts []remote.Option) ([]byte, error) {
	ref, err := name.NewDigest(a.Repository + "@" + a.Digest)
	if err != nil {
		return nil, err
	}
	desc, err := remote.Get(ref, ropts...)
	if err != nil {
		return nil, fmt.Errorf("fetching: %w", err)
	}
	var m v1.Manifest
	if err := json.Unmarshal(desc.Manifest, &m); err != nil || len(m.Layers) != 1 {
		return nil, fmt.Errorf("not a single-layer artifact")
	}
	l, err := remote.Layer(ref.Context().Digest(m.Layers[0].Digest.String()), ropts...)
	if err != nil {
		return nil, fmt.Errorf("fetching the content: %w", err)
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, fmt.Errorf("fetching the content: %w", err)
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func sameJSON(a, b []byte) bool {
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// content serves reloader-mirror's verification from the registry,
// checking every manifest and blob against its digest.
type content struct{ ropts []remote.Option }

func (c content) Manifest(_ context.Context, a release.Artifact) ([]byte, error) {
	ref, err := name.NewDigest(a.Repository + "@" + a.Digest)
	if err != nil {
		return nil, err
	}
	desc, err := remote.Get(ref, c.ropts...)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", ref, err)
	}
	return desc.Manifest, nil
}

func (c content) SmallBlob(_ context.Context, a release.Artifact, digest string, max int64) ([]byte, error) {
	ref, err := name.NewDigest(a.Repository + "@" + digest)
	if err != nil {
		return nil, err
	}
	l, err := remote.Layer(ref, c.ropts...)
	if err != nil {
		return nil, fmt.Errorf("fetching blob %s: %w", ref, err)
	}
	rc, err := l.Compressed()
	if err != nil {
		return nil, fmt.Errorf("fetching blob %s: %w", ref, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, max+1))
	if err != nil {
		return nil, fmt.Errorf("reading blob %s: %w", ref, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("blob %s is larger than %d bytes", ref, max)
	}
	if h, _, _ := v1.SHA256(bytes.NewReader(data)); h.String() != digest {
		return nil, fmt.Errorf("blob %s was altered: it hashes to %s", ref, h)
	}
	return data, nil
}

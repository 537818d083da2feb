package trust

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"

	"github.com/reloader-dev/reloader/release"
)

// keyVerifier is a one-key verifier for one key of a rotating policy.
type keyVerifier struct {
	key TrustedKey
	fp  string
	v   *Verifier
}

// newKeyVerifiers builds a verifier per accepted key, each with the whole
// policy but that key alone and no window: the window is judged once, by
// the rotating verifier, against its clock.
func newKeyVerifiers(p Policy) ([]keyVerifier, error) {
	var out []keyVerifier
	for _, k := range p.TrustedKeys() {
		one := p
		one.PublicKey, one.Keys = k.Key, nil
		v, err := NewVerifier(one)
		if err != nil {
			return nil, err
		}
		out = append(out, keyVerifier{key: k, fp: KeyFingerprint(k.Key), v: v})
	}
	return out, nil
}

// lockRotating finds the accepted key whose signature the lock's bundle
// carries, refuses it if its window has closed, and verifies the lock with
// it; the result names that key.
func (v *Verifier) lockRotating(lockJSON, bundleJSON []byte) (*release.Lock, LockResult, error) {
	var errs []error
	for _, kv := range v.byKey {
		if _, err := kv.v.verifyBundle(bundleJSON, sgverify.WithArtifact(bytes.NewReader(lockJSON))); err != nil {
			errs = append(errs, fmt.Errorf("key sha256:%s: %w", kv.fp, err))
			continue
		}
		if err := kv.key.current(v.policy.now()); err != nil {
			return nil, LockResult{}, fmt.Errorf("verifying the release lock's signature: %w", err)
		}
		l, res, err := kv.v.Lock(lockJSON, bundleJSON)
		if err != nil {
			return nil, LockResult{}, err
		}
		res.Signer = v.policy.Summary()
		res.Signer.KeySHA256 = kv.fp
		return l, res, nil
	}
	return nil, LockResult{}, fmt.Errorf("%w: verifying the release lock's signature: it verifies with none of the %s the policy accepts: %w",
		ErrUntrusted, v.policy.keyList(), errors.Join(errs...))
}

// forLock is the verifier of the key a verified lock names, if it is still
// accepted.
func (v *Verifier) forLock(l *release.Lock) (*Verifier, error) {
	k, err := v.policy.keyFor(l.Signer)
	if err != nil {
		return nil, fmt.Errorf("release %s: %w", l.Version, err)
	}
	fp := KeyFingerprint(k.Key)
	for _, kv := range v.byKey {
		if kv.fp == fp {
			return kv.v, nil
		}
	}
	return nil, fmt.Errorf("%w: release %s: no verifier for key sha256:%s", ErrPolicy, l.Version, fp)
}

// anyCurrentKey runs check with each key still accepted, in the policy's
// order, until one verifies.
func (v *Verifier) anyCurrentKey(check func(*Verifier) error) error {
	var errs []error
	for _, kv := range v.byKey {
		if err := kv.key.current(v.policy.now()); err != nil {
			errs = append(errs, err)
			continue
		}
		err := check(kv.v)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("key sha256:%s: %w", kv.fp, err))
	}
	return fmt.Errorf("%w: no accepted key verifies: %w", ErrUntrusted, errors.Join(errs...))
}

func (v *Verifier) imageSignaturesRotating(ctx context.Context, ref name.Digest, ropts []remote.Option) error {
	return v.anyCurrentKey(func(kv *Verifier) error { return kv.ImageSignatures(ctx, ref, ropts) })
}

func (v *Verifier) imageAttestationsRotating(ctx context.Context, ref name.Digest, ropts []remote.Option) ([][]byte, error) {
	var out [][]byte
	err := v.anyCurrentKey(func(kv *Verifier) error {
		var err error
		out, err = kv.ImageAttestations(ctx, ref, ropts)
		return err
	})
	return out, err
}

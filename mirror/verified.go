package mirror

import (
	"context"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// SignedLock is a release lock whose signature verified against a trust
// policy, with the bytes it was verified from: where every command starts.
// Only VerifyLock makes one, so a release is verified from it exactly once,
// and the lock is never verified again on the way (issue 48).
type SignedLock struct {
	*release.Lock
	Result trust.LockResult

	json, bundle []byte
	v            *trust.Verifier
}

// VerifyLock verifies the lock's signature, its signer, the release it is
// bound to and its scan record against v's policy.
func VerifyLock(lockJSON, lockBundle []byte, v *trust.Verifier) (*SignedLock, error) {
	l, lr, err := v.Lock(lockJSON, lockBundle)
	if err != nil {
		return nil, err
	}
	return &SignedLock{Lock: l, Result: lr, json: lockJSON, bundle: lockBundle, v: v}, nil
}

// Verifier is the policy the lock verified against, which its release's
// signatures are verified with too.
func (s *SignedLock) Verifier() *trust.Verifier { return s.v }

// Verified is a release verified at its source: the lock, every manifest
// fetched by digest and every signature checked. Plan, Export and Push are
// its methods, so nothing can be written from a release that was not
// verified first.
type Verified struct {
	Lock         *release.Lock
	LockResult   trust.LockResult
	Graph        *Graph
	Verification *trust.Result

	signed *SignedLock
	src    Source
	// survey is what the target held, asked during verification
	// (VerifyToPush); nil when Verify made the release.
	survey *survey
}

// Verify fetches every manifest of the release by digest from src and
// verifies every signature, all before anything is written anywhere.
func (s *SignedLock) Verify(ctx context.Context, src Source) (*Verified, error) {
	return s.verify(ctx, src, nil)
}

// VerifyToPush is Verify for a release that Push writes next, with the
// same opts. While the signatures are verified at the source, the target is
// asked which of the release's blobs and manifests it holds already: reads
// only, so nothing is written before the verdict, and a release that fails
// stops the questions before VerifyToPush returns. Push then writes what
// the answers say is missing, without asking again; on a re-run over a
// network, those questions were most of its time.
func (s *SignedLock) VerifyToPush(ctx context.Context, src Source, opts PushOptions) (*Verified, error) {
	return s.verify(ctx, src, &opts)
}

// Verify verifies the lock, then the release at src: VerifyLock and
// SignedLock.Verify in one, for a caller that has nothing else to do with
// the lock in between.
func Verify(ctx context.Context, src Source, lockJSON, lockBundle []byte, v *trust.Verifier) (*Verified, error) {
	s, err := VerifyLock(lockJSON, lockBundle, v)
	if err != nil {
		return nil, err
	}
	return s.Verify(ctx, src)
}

// VerifyToPush is VerifyLock and SignedLock.VerifyToPush in one.
func VerifyToPush(ctx context.Context, src Source, lockJSON, lockBundle []byte, v *trust.Verifier, opts PushOptions) (*Verified, error) {
	s, err := VerifyLock(lockJSON, lockBundle, v)
	if err != nil {
		return nil, err
	}
	return s.VerifyToPush(ctx, src, opts)
}

func (s *SignedLock) verify(ctx context.Context, src Source, push *PushOptions) (*Verified, error) {
	g, err := BuildGraph(ctx, s.Lock, src)
	if err != nil {
		return nil, err
	}
	var sv *survey
	if push != nil {
		sv = startSurvey(ctx, g, *push)
	}
	res, err := s.v.Release(ctx, s.Lock, newGraphContent(ctx, g, src))
	if err == nil {
		res.Lock = s.Result
		if err = res.Err(); err != nil {
			err = &VerificationError{Result: res, Err: err}
		}
	}
	if err != nil {
		if sv != nil {
			sv.stop()
		}
		return nil, err
	}
	return &Verified{Lock: s.Lock, LockResult: s.Result, Graph: g, Verification: res, signed: s, src: src, survey: sv}, nil
}

// Source is where the release was verified from, and where what the lock
// lists is read from through Graph.
func (r *Verified) Source() Source { return r.src }

// VerificationError is a release that did not verify; Result says where.
type VerificationError struct {
	Result *trust.Result
	Err    error
}

func (e *VerificationError) Error() string { return "verification failed: " + e.Err.Error() }
func (e *VerificationError) Unwrap() error { return e.Err }

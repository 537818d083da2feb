package mirror

import (
	"context"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// Release is a release verified at its source: the lock, every manifest
// fetched by digest and every signature checked. Plan, Export and Push are
// its methods, so nothing can be written from a release that was not
// verified first.
type Release struct {
	Lock         *release.Lock
	LockResult   trust.LockResult
	Graph        *Graph
	Verification *trust.Result

	src                  Source
	lockJSON, lockBundle []byte
	// v verifies the copy again where it was written (Push), with the
	// policy the source was verified with.
	v *trust.Verifier
}

// Verify verifies the lock, fetches every manifest by digest and verifies
// every signature, all before anything is written anywhere.
func Verify(ctx context.Context, src Source, lockJSON, lockBundle []byte, v *trust.Verifier) (*Release, error) {
	l, lr, err := v.Lock(lockJSON, lockBundle)
	if err != nil {
		return nil, err
	}
	g, err := BuildGraph(ctx, l, src)
	if err != nil {
		return nil, err
	}
	res, err := v.Release(ctx, l, newGraphContent(ctx, g, src))
	if err != nil {
		return nil, err
	}
	res.Lock = lr
	if err := res.Err(); err != nil {
		return nil, &VerificationError{Result: res, Err: err}
	}
	return &Release{Lock: l, LockResult: lr, Graph: g, Verification: res,
		src: src, lockJSON: lockJSON, lockBundle: lockBundle, v: v}, nil
}

// VerificationError is a release that did not verify; Result says where.
type VerificationError struct {
	Result *trust.Result
	Err    error
}

func (e *VerificationError) Error() string { return "verification failed: " + e.Err.Error() }
func (e *VerificationError) Unwrap() error { return e.Err }

package mirror

import (
	"context"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// Prepared is a release verified at its source, ready to be written.
type Prepared struct {
	Lock         *release.Lock
	LockResult   trust.LockResult
	Graph        *Graph
	Verification *trust.Result
}

// Prepare verifies the lock, fetches every manifest by digest and verifies
// every signature, all before anything is written anywhere.
func Prepare(ctx context.Context, src Source, lockJSON, lockBundle []byte, v *trust.Verifier) (*Prepared, error) {
	l, lr, err := v.Lock(lockJSON, lockBundle)
	if err != nil {
		return nil, err
	}
	g, err := Build(ctx, l, src)
	if err != nil {
		return nil, err
	}
	res, err := v.Release(ctx, l, graphContent{g: g, src: src})
	if err != nil {
		return nil, err
	}
	res.Lock = lr
	if err := res.Err(); err != nil {
		return nil, &VerificationError{Result: res, Err: err}
	}
	return &Prepared{Lock: l, LockResult: lr, Graph: g, Verification: res}, nil
}

// VerificationError is a release that did not verify; Result says where.
type VerificationError struct {
	Result *trust.Result
	Err    error
}

func (e *VerificationError) Error() string { return "verification failed: " + e.Err.Error() }
func (e *VerificationError) Unwrap() error { return e.Err }

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
	// survey is what the target held, asked during verification
	// (VerifyToPush); nil when Verify made the release.
	survey *survey
}

// Verify verifies the lock, fetches every manifest by digest and verifies
// every signature, all before anything is written anywhere.
func Verify(ctx context.Context, src Source, lockJSON, lockBundle []byte, v *trust.Verifier) (*Release, error) {
	return verify(ctx, src, lockJSON, lockBundle, v, nil)
}

// VerifyToPush is Verify for a release that Push writes next, with the
// same opts. While the signatures are verified at the source, the target is
// asked which of the release's blobs and manifests it holds already: reads
// only, so nothing is written before the verdict, and a release that fails
// stops the questions before VerifyToPush returns. Push then writes what
// the answers say is missing, without asking again; on a re-run over a
// network, those questions were most of its time.
func VerifyToPush(ctx context.Context, src Source, lockJSON, lockBundle []byte, v *trust.Verifier, opts PushOptions) (*Release, error) {
	return verify(ctx, src, lockJSON, lockBundle, v, &opts)
}

func verify(ctx context.Context, src Source, lockJSON, lockBundle []byte, v *trust.Verifier, push *PushOptions) (*Release, error) {
	l, lr, err := v.Lock(lockJSON, lockBundle)
	if err != nil {
		return nil, err
	}
	g, err := BuildGraph(ctx, l, src)
	if err != nil {
		return nil, err
	}
	var sv *survey
	if push != nil {
		sv = startSurvey(ctx, g, *push)
	}
	res, err := v.Release(ctx, l, newGraphContent(ctx, g, src))
	if err == nil {
		res.Lock = lr
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
	return &Release{Lock: l, LockResult: lr, Graph: g, Verification: res,
		src: src, lockJSON: lockJSON, lockBundle: lockBundle, v: v, survey: sv}, nil
}

// VerificationError is a release that did not verify; Result says where.
type VerificationError struct {
	Result *trust.Result
	Err    error
}

func (e *VerificationError) Error() string { return "verification failed: " + e.Err.Error() }
func (e *VerificationError) Unwrap() error { return e.Err }

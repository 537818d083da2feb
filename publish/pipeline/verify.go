package pipeline

import (
	"context"
	"fmt"
	"os"

	"github.com/reloader-dev/reloader/release/verify"
)

func (r *run) verify(ctx context.Context) error {
	vo := r.opts.Verify
	vo.Expect = r.lock.Signer
	vo.Remote = r.ropts
	lockBytes, err := os.ReadFile(r.res.LockPath)
	if err != nil {
		return err
	}
	bundle, err := os.ReadFile(r.res.BundlePath)
	if err != nil {
		return err
	}
	l, err := verify.Lock(ctx, lockBytes, bundle, vo)
	if err != nil {
		return err
	}
	res, err := verify.Artifacts(ctx, l, vo)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.log, "    %d artifacts verified against the release signer\n", len(res.Checked))
	return nil
}

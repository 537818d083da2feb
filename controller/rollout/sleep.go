package rollout

import (
	"context"
	"time"
)

func sleepCtx(ctx context.Context, attempt int) error {
	d := time.Duration(20+attempt*20) * time.Millisecond
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

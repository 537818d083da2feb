package controller

import (
	"context"
	"fmt"

	"github.com/reloader-dev/reloader/controller/rollout"
	"github.com/reloader-dev/reloader/controller/workload"
)

// syncJobRecords finishes Job reloads that stopped between deleting the Job
// and creating its replacement. It handles a key when the key is a record,
// or when it names a Job that is gone but recorded; otherwise the sync goes
// on as for any workload.
func (c *Controller) syncJobRecords(ctx context.Context, key workload.Key, v workload.View, exists bool) (bool, error) {
	if !key.Kind.Has(workload.Recreates) {
		return false, nil
	}
	target := key.Name
	if exists {
		name, isRecord := rollout.IsRecord(v.Object)
		if !isRecord {
			return false, nil
		}
		target = name
	}
	recs, current, err := c.cache.JobRecords(key.Kind, key.Namespace, target)
	if err != nil || len(recs) == 0 {
		return exists, err
	}
	for i, rec := range recs {
		switch r := rollout.Recover(rec, current); {
		case r == rollout.Recreate && i == 0:
			if err := rollout.Replay(ctx, c.cs, rec, c.write.options()); err != nil {
				return true, fmt.Errorf("recreating Job %s/%s from its reload record: %w", key.Namespace, target, err)
			}
			c.o.Logger.Info("recreated a Job whose reload had stopped after deleting it", "workload", key.Namespace+"/"+target, "record", rec.Name)
		case r == rollout.Wait:
		default:
			if err := rollout.DeleteRecord(ctx, c.cs, rec); err != nil {
				return true, fmt.Errorf("deleting the reload record %s/%s: %w", key.Namespace, rec.Name, err)
			}
		}
	}
	return true, nil
}

package controller

import (
	"context"
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/rollout"
	"github.com/reloader-dev/reloader/controller/workload"
)

// indexRecord finds the records of Job reloads (see rollout.RecordOf) by the
// Job they recreate: "<ns>/<name>".
const indexRecord = "reloader/recreates"

func indexRecords(obj any) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	if name, ok := rollout.IsRecord(m); ok {
		return []string{m.GetNamespace() + "/" + name}, nil
	}
	return nil, nil
}

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
	s := c.scopeFor(key.Namespace)
	if s == nil || s.workloads[key.Kind] == nil {
		return exists, nil
	}
	idx := s.workloads[key.Kind].GetIndexer()
	found, err := idx.ByIndex(indexRecord, key.Namespace+"/"+target)
	if err != nil || len(found) == 0 {
		return exists, err
	}
	recs := make([]*batchv1.Job, 0, len(found))
	for _, o := range found {
		recs = append(recs, o.(*batchv1.Job))
	}
	// Newest first: the latest decision is the one to replay.
	sort.Slice(recs, func(i, j int) bool { return recs[j].CreationTimestamp.Before(&recs[i].CreationTimestamp) })
	var current metav1.Object
	if obj, ok, err := idx.GetByKey(key.Namespace + "/" + target); err == nil && ok {
		current = obj.(metav1.Object)
	}
	for i, rec := range recs {
		switch r := rollout.Recover(rec, current); {
		case r == rollout.Recreate && i == 0:
			if err := rollout.Replay(ctx, c.cs, rec, c.writeOptions()); err != nil {
				return true, err
			}
			c.o.Logger.Info("recreated a Job whose reload had stopped after deleting it", "workload", key.Namespace+"/"+target, "record", rec.Name)
		case r == rollout.Wait:
		default:
			if err := rollout.DeleteRecord(ctx, c.cs, rec); err != nil {
				return true, err
			}
		}
	}
	return true, nil
}

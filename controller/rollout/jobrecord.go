package rollout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/controller/workload"
)

// A Job reload deletes the Job and creates it again; the two cannot be one
// request, because both have the same name. Between them the Job exists
// nowhere but in the controller's memory, so a refused create (quota,
// admission, a cancelled context) or a crash would lose it. Before deleting,
// the reload therefore writes the replacement down in a record: a Job in the
// same namespace that can never run (suspended, parallelism 0) carrying the
// replacement in an annotation. A record needs no permission beyond those a
// Job reload already has, survives restarts, and reaches every replica
// through the Job informer. It is deleted once the replacement exists.
const (
	// RecordOf names, on a record, the Job it recreates.
	RecordOf = "reloader.dev/recreates"
	// RecordOfUID is the UID of the Job that was (to be) deleted: while a Job
	// with that UID exists, the reload has not got past the delete.
	RecordOfUID = "reloader.dev/recreates-uid"
	// RecordJob holds the replacement Job, JSON-encoded.
	RecordJob = "reloader.dev/recreate-job"
)

// recordName is the record's name: the Job's name, shortened so the record
// stays a valid label value, and a digest of the change and of the Job it
// replaces, so a retried reload finds its own record already there and never
// another's.
func recordName(old *batchv1.Job, c workload.Change) string {
	prefix := old.Name
	if len(prefix) > 45 {
		prefix = strings.TrimRight(prefix[:45], "-.")
	}
	sum := sha256.Sum256([]byte(changeID(c) + "/" + string(old.UID)))
	return prefix + "-reload-" + hex.EncodeToString(sum[:])[:10]
}

// recordFor builds the record of replacing old by job.
func recordFor(old, job *batchv1.Job, c workload.Change) (*batchv1.Job, error) {
	body, err := json.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("encoding the replacement of Job %s/%s: %w", old.Namespace, old.Name, err)
	}
	suspend := true
	var zero int32
	rec := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:      recordName(old, c),
			Namespace: old.Namespace,
			// No labels and no owners: nothing that selects or adopts Jobs
			// (a CronJob, a queueing controller) may take it for its own.
			Annotations: map[string]string{RecordOf: old.Name, RecordOfUID: string(old.UID), RecordJob: string(body)},
		},
		Spec: *job.Spec.DeepCopy(),
	}
	rec.Spec.Suspend, rec.Spec.Parallelism = &suspend, &zero
	// The built-in Job controller, which honours suspend, manages it.
	rec.Spec.TTLSecondsAfterFinished, rec.Spec.ManagedBy = nil, nil
	return rec, nil
}

// IsRecord reports whether a cached Job is a record of a Job reload rather
// than a workload, and which Job it recreates.
func IsRecord(obj metav1.Object) (string, bool) {
	name, ok := obj.GetAnnotations()[RecordOf]
	return name, ok && obj.GetAnnotations()[RecordJob] != ""
}

// Recovery is what a record asks for, given what the cache holds under the
// recreated Job's name.
type Recovery int

const (
	// Wait: the Job the record replaces still exists; the reload of that
	// Job (retried by the queue) goes on from there.
	Wait Recovery = iota
	// Recreate: the Job is gone and its replacement is not there yet.
	Recreate
	// Done: the replacement exists; only the record remains to delete.
	Done
)

// Recover decides what a record needs. current is the Job cached under the
// recreated name, nil when there is none.
func Recover(rec, current metav1.Object) Recovery {
	switch {
	case current == nil:
		return Recreate
	case string(current.GetUID()) == rec.GetAnnotations()[RecordOfUID]:
		return Wait
	}
	return Done
}

// Replay creates the Job a record holds (it may already exist: a lagging
// cache) and then deletes the record.
func Replay(ctx context.Context, cs kubernetes.Interface, rec *batchv1.Job, o Options) error {
	job, err := RecordedJob(rec)
	if err != nil {
		return err
	}
	if err := o.fenced("replaying Job record " + rec.Name); err != nil {
		return err
	}
	// One attempt: AlreadyExists means the old Job is still going away or
	// the replacement is already there, and the cache will tell which.
	if _, err := cs.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{FieldManager: o.FieldManager}); err != nil {
		return fmt.Errorf("recreating Job %s/%s from record %s: %w", job.Namespace, job.Name, rec.Name, err)
	}
	return DeleteRecord(ctx, cs, rec)
}

// RecordedJob reads the replacement a record holds. Anyone allowed to create
// Jobs can write a record, so it is checked to name the Job it recreates, in
// the record's own namespace, and to carry no server-set fields.
func RecordedJob(rec *batchv1.Job) (*batchv1.Job, error) {
	job := &batchv1.Job{}
	if err := json.Unmarshal([]byte(rec.Annotations[RecordJob]), job); err != nil {
		return nil, fmt.Errorf("reading the Job recorded in %s/%s (annotation %s): %w", rec.Namespace, rec.Name, RecordJob, err)
	}
	if job.Namespace != rec.Namespace || job.Name == "" || job.Name != rec.Annotations[RecordOf] {
		return nil, fmt.Errorf("record %s/%s holds Job %q in namespace %q, not %s/%s", rec.Namespace, rec.Name, job.Name, job.Namespace, rec.Namespace, rec.Annotations[RecordOf])
	}
	if job.UID != "" || job.ResourceVersion != "" {
		return nil, fmt.Errorf("record %s/%s holds a Job with a uid or resourceVersion set", rec.Namespace, rec.Name)
	}
	return job, nil
}

// DeleteRecord deletes a record whose work is done.
func DeleteRecord(ctx context.Context, cs kubernetes.Interface, rec *batchv1.Job) error {
	var do metav1.DeleteOptions
	if rec.UID != "" {
		uid := rec.UID
		do.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	err := cs.BatchV1().Jobs(rec.Namespace).Delete(ctx, rec.Name, do)
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting record %s/%s of a Job reload: %w", rec.Namespace, rec.Name, err)
	}
	return nil
}

// createReplacement creates job in place of the Job with UID old. The old Job
// may linger while its finalizers run, so AlreadyExists is retried briefly;
// a Job of that name with another UID is the replacement, created from the
// record by another worker, and counts as done.
func createReplacement(ctx context.Context, cs kubernetes.Interface, job *batchv1.Job, old types.UID, o Options) error {
	for attempt := 0; ; attempt++ {
		_, err := cs.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{FieldManager: o.FieldManager})
		if err == nil || !apierrors.IsAlreadyExists(err) {
			return err
		}
		got, gerr := cs.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
		if gerr == nil && got.UID != old {
			return nil
		}
		if attempt >= 50 {
			return err
		}
		if werr := sleepCtx(ctx, attempt); werr != nil {
			return werr
		}
	}
}

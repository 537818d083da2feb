// Package controller is the reload engine: a level-triggered controller that
// rolls Deployments, StatefulSets, DaemonSets, CronJobs and Jobs when the
// ConfigMaps and Secrets they use change.
//
// It follows kubernetes/sample-controller: event handlers only enqueue the
// keys of affected workloads; one idempotent sync per workload reads the
// informer caches, computes the hashes of what the workload uses, compares them
// with what was last applied to it (recorded on the workload's own metadata)
// and patches only when they differ. All state lives in Kubernetes objects, so
// a restart neither restarts healthy workloads nor misses a change made while
// the controller was down.
//
// The caches hold hashes, not data: ConfigMap and Secret values are hashed and
// dropped as they enter the informer, and are never logged or sent anywhere.
//
// The data path of a reload, read -> decide -> apply -> report:
//  1. configHandler: a ConfigMap/Secret event enqueues the keys of the
//     workloads that use or name it (indexes on the workload informers).
//  2. sync reads the workload from its cache, finishes a Job reload that
//     stopped halfway (jobrecords.go) and waits for the workload's own Add.
//  3. decide.Decide, pure, over the caches (cacheReader; a workload whose
//     first record waits for its write slot is read with it, adoption.go): the gates (not
//     reloadable, out of scope, not annotated), the pause, the watched
//     resources and what was last applied to each (record, reload marker,
//     first-sight rule), the reloads, the skips, the next record, storm
//     control's hold and the one workload.Change. Inspect (reloader explain)
//     calls the same Decide over objects it was given.
//  4. the webhook or rollout.Apply writes the change; recordOutcome counts,
//     raises the Event and alerts. sync returns a result (reloaded,
//     requeue-after) and processNext does the queue's bookkeeping; per-key
//     state changes only through keyStates' transitions (keystate.go).
package controller

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
// The data path of a reload:
//  1. configHandler: a ConfigMap/Secret event enqueues the keys of the
//     workloads that use or name it (indexes on the workload informers).
//  2. sync reads the workload from its cache and stops early when it is not
//     reloadable, out of scope, not annotated, or paused (resumeIfPauseOver).
//  3. watchedSet: the watched resources and their current hashes; the
//     applied-hashes record is parsed from the workload's annotation.
//  4. gatherPlanInput: for each, what was last applied (record, else a reload
//     marker, else the first-sight rule); then planChange, pure, decides the
//     reloads, the skips and the next record. Inspect (reloader explain) calls
//     the same two functions.
//  5. storm control may defer; buildChange turns the reloads into one
//     workload.Change (markers, pause, restartAt); the webhook or
//     workload.Apply writes it; recordOutcome counts, raises the Event, alerts.
package controller

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
package controller

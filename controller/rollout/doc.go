// Package rollout applies a workload.Change to the live object: a patch for
// the kinds that roll their pods themselves, a new Job for a CronJob, a
// delete and re-create (kept in a record meanwhile) for a Job. It also holds
// what else reaches the apiserver per kind: informers and uncached reads.
// The decision of what to change (controller/decide) never imports it.
package rollout

// Package controller is the reload engine: a level-triggered controller that
// rolls Deployments, StatefulSets, DaemonSets, CronJobs and Jobs (and Argo
// Rollouts and DeploymentConfigs) when the ConfigMaps and Secrets they use
// change.
//
// It follows kubernetes/sample-controller: event handlers only enqueue the
// keys of affected workloads; one idempotent sync per workload reads the
// caches, decides by comparing the hashes of what the workload uses with
// what was last applied to it (recorded on the workload's own metadata) and
// writes only when they differ. All state lives in Kubernetes objects, so a
// restart neither restarts healthy workloads nor misses a change made while
// the controller was down. The caches hold hashes, not data: ConfigMap and
// Secret values are hashed and dropped as they enter the informer, and are
// never logged or sent anywhere.
//
// A newcomer's reading order, one reload from event to Event:
//  1. controller/cache: what the controller knows of the cluster. The
//     caller builds the informers (cache.New, in controller/app) and hands
//     them in; Inspect and the unit tests build the same caches from
//     objects (cache.FromObjects).
//  2. handlers.go: a ConfigMap or Secret event enqueues the workloads that
//     use or name it (the caches' indexes); queue.go orders the queue,
//     changes ahead of start-up adoption.
//  3. controller.go: New wires the roles together; processNext takes a key,
//     calls sync, and does the queue's bookkeeping (the workqueue owns
//     retries).
//  4. sync.go: sync reads the workload, asks controller/decide (pure, over
//     the caches' Reader) and switches once on the decision's verdict
//     (decide.Next): stop at a gate, wait out a pause or a stale view, write
//     the record alone, or reload, unless a gate holds it.
//  5. budget.go and adoption.go: the gates, one shape (gate.hold): the
//     decision's own holds (storm control, the change window), the rollout
//     budget, adoption pacing.
//  6. write.go: the writes, each behind the HA fence (Options.Fence);
//     controller/rollout applies them per workload kind.
//  7. controller/report: one Reporter tells what happened (Events,
//     metrics, the audit trail, log lines, alerts), once per occurrence.
//
// keystate.go holds what the controller remembers per workload between
// syncs (its birth, a pending adoption record, queue times); jobrecords.go
// finishes Job reloads that stopped halfway; inspect.go is
// `reloader explain`'s entry.
package controller

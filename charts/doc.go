// Package charts holds the Helm charts (reloader, reloader-ubi and the
// reloader-lib library they share) and the Go code that renders them with the
// Helm SDK and applies their RBAC to a cluster.
//
// The tests of this package are the charts' specification: they render a
// matrix of values, compare the RBAC rules with the table in
// reloader/README.md row by row, have a real kube-apiserver accept every
// manifest (server-side dry-run) and answer SubjectAccessReviews for the
// rendered ServiceAccount, and check the pod against the Pod Security
// Standard "restricted".
//
// ApplyRBAC is exported for end-to-end tests elsewhere, which run the
// controller under exactly the identity the chart gives it.
package charts

// Package decide is the reload decision: given a workload, what the caches
// hold about the resources it uses, and the time, Decide says what a sync
// would do and why, writing nothing and reading nothing but its Reader.
//
// It is the one place the rules live. The controller's sync reads its
// informer caches through a Reader, calls Decide, applies the change it
// returns and reports the outcome; `reloader explain` (controller.Inspect)
// calls the same Decide over objects it listed itself. So the command
// cannot print a verdict the controller would not reach, and the rules are
// unit-tested here in milliseconds, without an apiserver.
//
// It imports no client-go informer or clientset package (deps_test.go): a
// Reader is the seam, as typed listers are in kubernetes/sample-controller.
package decide

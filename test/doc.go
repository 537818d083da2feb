// Package test holds the shared harness that every real-component test in this
// repository uses: a kube-apiserver, etcd and kube-controller-manager built
// from the Go module proxy (test/controlplane), OCI registries on loopback
// (test/registry), a proxy in front of the apiserver that gives one client a
// lagging view on purpose (test/apiproxy: a frozen or partitioned controller,
// made deterministic) and the locator for the pinned binaries (test/tools).
//
// Nothing here talks to anything but 127.0.0.1.
package test

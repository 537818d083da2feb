// Package tools locates, and builds on first use, the pinned third-party
// binaries the tests run as real processes: etcd, kube-apiserver,
// kube-controller-manager, the CNCF distribution registry, Trivy, the
// cosign and crane CLIs, and Kyverno.
//
// They are compiled from the Go module proxy by hack/tools/ensure.sh into a
// cache directory outside git, keyed by the pins, so only the first caller on a
// machine pays for the build.
package tools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Set names a group of binaries built together from one tools module.
type Set string

const (
	// ControlPlane holds etcd, kube-apiserver and kube-controller-manager.
	ControlPlane Set = "controlplane"
	// Registry holds the CNCF distribution v3 registry.
	Registry Set = "registry"
	// Lint holds staticcheck, actionlint and helm.
	Lint Set = "lint"
	// Trivy holds the Trivy CLI (its cold build is the longest of the sets).
	Trivy Set = "trivy"
	// Clients holds the CLIs users check a release with (cosign, crane):
	// what we ship must verify with them, not only with our own code.
	Clients Set = "clients"
	// Clients3 holds cosign v3 beside v2 (a release's page must work with
	// both majors users install). It is built in the Kyverno set, whose
	// engine links cosign v3's library: one dependency graph, compiled once.
	Clients3 Set = "kyverno"
	// PolicyController holds sigstore policy-controller's policy-tester and
	// webhook: the engine that evaluates the ClusterImagePolicies
	// reloader-mirror policy writes.
	PolicyController Set = "policycontroller"
	// Bench holds peers the benchmarks compare against (regclient's regctl);
	// only `make bench` builds it.
	Bench Set = "bench"
	// Kyverno holds Kyverno's admission controller, which the tests run as a
	// real webhook to enforce the policies reloader-mirror policy writes, and
	// cosign v3 (Clients3).
	Kyverno Set = "kyverno"
)

// Dir returns the directory holding the binaries of set, building them first if
// needed. RELOADER_TOOLS_BIN_<SET> (e.g. RELOADER_TOOLS_BIN_CONTROLPLANE)
// overrides the location for machines that provide the binaries otherwise.
func Dir(ctx context.Context, set Set) (string, error) {
	if d := os.Getenv("RELOADER_TOOLS_BIN_" + strings.ToUpper(string(set))); d != "" {
		return d, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "tools", "ensure.sh"), string(set))
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the %s tools with hack/tools/ensure.sh: %w\n%s", set, err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

// Binary returns the path of one binary of set.
func Binary(ctx context.Context, set Set, name string) (string, error) {
	d, err := Dir(ctx, set)
	if err != nil {
		return "", err
	}
	p := filepath.Join(d, name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("tool %s of set %s: %w", name, set, err)
	}
	return p, nil
}

// RepoRoot finds the repository root from this source file, so tests in any
// package (and any working directory) reach hack/tools.
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if ok {
		root := filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
		if _, err := os.Stat(filepath.Join(root, "hack", "tools", "ensure.sh")); err == nil {
			return root, nil
		}
	}
	// -trimpath builds lose the absolute source path; walk up from the
	// working directory instead.
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "hack", "tools", "ensure.sh")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("finding the repository root: no hack/tools/ensure.sh above %s", wd)
		}
	}
}

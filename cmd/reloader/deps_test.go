package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The controller runs in every cluster with the rights to roll workloads: it
// must not carry the release and mirror toolchain (cosign, sigstore, syft,
// helm) and their attack surface.
func TestControllerDoesNotLinkTheSupplyChainToolkit(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/sigstore/", "github.com/anchore/", "helm.sh/", "github.com/reloader-dev/reloader/mirror", "github.com/reloader-dev/reloader/release"} {
			if strings.HasPrefix(pkg, banned) {
				t.Errorf("cmd/reloader links %s", pkg)
			}
		}
	}
}

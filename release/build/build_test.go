package build

import (
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Only a build asked to link the FIPS module does: a GOFIPS140 (or GOFLAGS)
// in the caller's environment never reaches a release build, and the FIPS
// build's environment names the module once.
func TestOnlyTheFIPSBuildLinksTheFIPSModule(t *testing.T) {
	t.Setenv("GOFIPS140", "latest")
	t.Setenv("GOFLAGS", "-race")
	p := v1.Platform{OS: "linux", Architecture: "arm64"}
	fips := func(env []string) []string {
		return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
			return !strings.HasPrefix(kv, "GOFIPS140=") && !strings.HasPrefix(kv, "GOFLAGS=")
		})
	}
	if got := fips(buildEnv(p, "")); len(got) != 0 {
		t.Errorf("the standard build's environment has %v", got)
	}
	if got := fips(buildEnv(p, "certified")); !slices.Equal(got, []string{"GOFIPS140=certified"}) {
		t.Errorf("the FIPS build's environment has %v, want GOFIPS140=certified alone", got)
	}
}

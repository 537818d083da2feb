package build

import (
	"debug/buildinfo"
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

// A release binary records the flags it was built with, and FlagsOf reads
// them back as go build takes them: what its provenance states and a
// rebuild passes, the FIPS variant's as the others'. Built here with
// Binaries, as a release is.
func TestABinaryRecordsTheFlagsItWasBuiltWith(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a small program")
	}
	p := v1.Platform{OS: "linux", Architecture: "amd64"}
	for _, c := range []struct {
		flags     []string
		gofips140 string
	}{{nil, ""}, {nil, "certified"}, {[]string{"-trimpath", "-buildvcs=false"}, ""}} {
		flags := c.flags
		bins, err := Binaries(t.Context(), Options{MainPackage: "./publish/releasetest/internal/smallapp", Dir: "../..", OutDir: t.TempDir(),
			BinaryName: "app", Platforms: []v1.Platform{p}, Version: "v0.0.1", Commit: strings.Repeat("a", 40), Flags: flags, GOFIPS140: c.gofips140})
		if err != nil {
			t.Fatal(err)
		}
		info, err := buildinfo.ReadFile(bins[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		want := flags
		if want == nil {
			want = Flags()
		}
		// A FIPS build records the tag go adds for GOFIPS140 among its
		// -tags; a rebuild sets GOFIPS140 again instead.
		if got := FlagsOf(info.Settings); !slices.Equal(got, want) {
			t.Errorf("built with %q (GOFIPS140=%q), the binary records %q", want, c.gofips140, got)
		}
	}
}

// What reaches go build from a provenance is one of the flags a release is
// built with; anything else, such as -toolexec, is refused by name.
func TestOnlyAReleasesOwnFlagsAreAccepted(t *testing.T) {
	if err := CheckFlags(Flags()); err != nil {
		t.Errorf("today's flags: %v", err)
	}
	if err := CheckFlags([]string{"-trimpath", "-buildvcs=false"}); err != nil {
		t.Errorf("the flags of a release before them: %v", err)
	}
	for _, bad := range []string{"-toolexec=/tmp/x", "-tags=netgo -toolexec=x", "-gcflags=all=-N", "-ldflags=-X main.a=b", "-tags=", "-overlay=o.json", "-modfile=x"} {
		if err := CheckFlags([]string{"-trimpath", bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %v, want a refusal naming it", bad, err)
		}
	}
}

package test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/publish/build"
)

// Everything static compiles with one set of flags: the release builds
// (publish/build.Flags), the tool sets (hack/tools/ensure.sh) and go vet,
// the plain tests and the builds they run (the Makefile's STATIC_FLAGS in
// PLAIN_ENV). The Go build cache shares a compile only between builds with
// the same flags, so one of the three drifting would compile about two
// thousand packages a second time on an empty cache, and nothing else
// would say so.
func TestReleaseToolAndTestBuildsCompileWithTheSameFlags(t *testing.T) {
	want := strings.Join(build.Flags(), " ")
	for _, f := range []struct{ path, re string }{
		{"../Makefile", `(?m)^STATIC_FLAGS = (.*)$`},
		{"../hack/tools/ensure.sh", `(?m)^static_flags="(.*)"$`},
	} {
		data, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(f.re).FindSubmatch(data)
		if m == nil {
			t.Errorf("%s: no %s", f.path, f.re)
			continue
		}
		if got := strings.TrimSpace(string(m[1])); got != want {
			t.Errorf("%s builds with %q, release builds with %q", f.path, got, want)
		}
	}
}

package test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeMaxLines is how long the README may be: a newcomer reads it whole.
const readmeMaxLines = 300

// readmeCommandRunBy names, for every command the README shows in an sh
// block outside the air-gap drill's (which test/airgap checks is the
// drill's commands.sh, run as written), the test that runs it: the file
// and the test function, or the CI script.
var readmeCommandRunBy = map[string]struct{ file, runs string }{
	"make demo": {"test/demo_test.go", "func TestMakeDemoReloadsADeployment("},
	"make test": {".ci/run", "make test TEST_ALSO=staticcheck-cache"},
	"reloader-mirror review -f reloader-v1.2.3.tar --key release/keys/cosign.pub --verify --out review": {
		// The same arguments, on an archive of a real release.
		"cmd/mirror/signedreview_test.go", `"-f", archive, "--verify", "--out", dir}, trustArgs...`,
	},
}

// TestReadmeIsShortAndEveryCommandInItIsRunByATest: the README stays under
// readmeMaxLines lines, and each command of its sh blocks is either the
// air-gap drill's or listed above with the test that runs it, which must
// still run it.
func TestReadmeIsShortAndEveryCommandInItIsRunByATest(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n >= readmeMaxLines {
		t.Errorf("README.md has %d lines, want fewer than %d: move detail to docs/ or bench/README.md", n, readmeMaxLines)
	}
	drill, err := os.ReadFile(filepath.Join("airgap", "testdata", "commands.sh"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("README.md has no sh block")
	}
	seen := map[string]bool{}
	for _, b := range blocks {
		if b[1] == string(drill) {
			continue
		}
		for _, line := range strings.Split(b[1], "\n") {
			cmd, _, _ := strings.Cut(line, "#")
			cmd = strings.TrimSpace(cmd)
			if cmd == "" {
				continue
			}
			seen[cmd] = true
			by, ok := readmeCommandRunBy[cmd]
			if !ok {
				t.Errorf("README.md shows %q, which no test is known to run: add it to the drill or to readmeCommandRunBy with its test", cmd)
				continue
			}
			src, err := os.ReadFile(filepath.Join("..", by.file))
			if err != nil || !strings.Contains(string(src), by.runs) {
				t.Errorf("README.md shows %q, said to be run by %s (%q), which does not run it any more (%v)", cmd, by.file, by.runs, err)
			}
		}
	}
	for cmd := range readmeCommandRunBy {
		if !seen[cmd] {
			t.Errorf("readmeCommandRunBy lists %q, which README.md no longer shows", cmd)
		}
	}
}

package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The layout table in docs/contributing.md is how a new maintainer finds
// code (the README, kept short for newcomers, points there): every path it
// names must exist, and every package of the supply-chain half (release/,
// mirror/, internal/) must be named by it or lie under a path it names.
func TestLayoutTableMatchesTheTree(t *testing.T) {
	doc, err := os.ReadFile("../docs/contributing.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "## Layout")
	if start < 0 {
		t.Fatal("docs/contributing.md has no Layout section")
	}
	section := text[start:]
	if end := strings.Index(section[len("## Layout"):], "\n## "); end >= 0 {
		section = section[:len("## Layout")+end]
	}
	named := map[string]bool{}
	cell := regexp.MustCompile("`([a-z][a-z0-9/._-]*)`")
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.SplitN(line, "|", 3)[1]
		for _, m := range cell.FindAllStringSubmatch(first, -1) {
			p := strings.TrimSuffix(m[1], "/")
			named[p] = true
			if _, err := os.Stat(filepath.Join("..", p)); err != nil {
				t.Errorf("the layout in docs/contributing.md names %s, which does not exist", p)
			}
		}
	}
	// internal/'s packages are listed in its description cell.
	out, err := exec.Command("go", "list", "../release/...", "../publish/...", "../mirror/...", "../internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(pkg, "github.com/reloader-dev/reloader/")
		// release/ names only the lock package: its subpackages are each
		// named; elsewhere a named directory covers what lies below it.
		covered := named[rel]
		for p := filepath.Dir(rel); !covered && p != "." && p != "release"; p = filepath.Dir(p) {
			covered = named[p]
		}
		if strings.HasPrefix(rel, "internal/") {
			covered = strings.Contains(section, "`"+strings.TrimPrefix(rel, "internal/")+"`")
		}
		if !covered {
			t.Errorf("package %s is not in the layout table of docs/contributing.md", rel)
		}
	}
}

package test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// `make test` runs each test once: the mirror tests named by
// RACE_MIRROR_TESTS under the race detector, and every other test of the
// plain packages with those names skipped. A renamed test would silently
// lose its race run, a test of the same name in another package would be
// skipped there and run nowhere, and one in a file built only without the
// race detector would run in neither phase; all three fail here instead.
func TestRaceMirrorTestsNameMirrorTestsAndNoOthers(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^RACE_MIRROR_TESTS \?= \^\(([A-Za-z0-9|]+)\)\$\$$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile has no RACE_MIRROR_TESTS ?= ^(A|B|...)$$ line")
	}
	want := map[string]bool{}
	for _, name := range strings.Split(string(m[1]), "|") {
		want[name] = true
	}

	decl := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]*)\(`)
	found := map[string]bool{}
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "_out") && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		inMirror := filepath.Dir(path) == filepath.Join("..", "mirror")
		for _, fm := range decl.FindAllSubmatch(src, -1) {
			name := string(fm[1])
			if !want[name] {
				continue
			}
			if !inMirror {
				t.Errorf("%s declares %s, a name RACE_MIRROR_TESTS reserves for the mirror package: it would run in no phase", path, name)
				continue
			}
			if strings.HasPrefix(string(src), "//go:build !race") {
				t.Errorf("%s declares %s, which RACE_MIRROR_TESTS runs under the race detector, but is built only without it", path, name)
			}
			found[name] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range want {
		if !found[name] {
			t.Errorf("RACE_MIRROR_TESTS names %s, which is no test of the mirror package", name)
		}
	}
}

package releasetest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/semver"

	"github.com/reloader-dev/reloader/release/support"
)

// SupportYears is how long the series of a test support table are
// supported after the release: long enough that no test run outlives it.
const SupportYears = 20

// WriteSupportTable writes, as support.yaml in dir, the support table a test
// release ships when the test names none: a row for the series of each
// version, released at created and supported for SupportYears. The
// pipeline refuses to cut a release whose series its table does not list,
// and the checkout's release/support.yaml lists only the project's real
// series, so tests that cut other versions ship this one. The table is
// parsed back as the pipeline reads it, so it cannot be one it refuses.
func WriteSupportTable(dir string, created time.Time, versions ...string) (string, error) {
	var series []string
	for _, v := range versions {
		s := semver.MajorMinor(v)
		if s == "" {
			return "", fmt.Errorf("test support table: %q is not a version", v)
		}
		if !slices.Contains(series, s) {
			series = append(series, s)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: %s\nseries:\n", support.APIVersion)
	released, end := created.UTC().Format(time.DateOnly), created.UTC().AddDate(SupportYears, 0, 0).Format(time.DateOnly)
	for _, s := range series {
		fmt.Fprintf(&b, "  - {series: %s, released: %q, endOfSupport: %q}\n", s, released, end)
	}
	if _, err := support.ParseTable([]byte(b.String())); err != nil {
		return "", fmt.Errorf("test support table for %s: %w", strings.Join(versions, ", "), err)
	}
	p := filepath.Join(dir, "support.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		return "", fmt.Errorf("writing the test support table: %w", err)
	}
	return p, nil
}

// SupportTableFile is WriteSupportTable for a test that runs the pipeline
// (or reloader-release local) itself: the table lists the series of
// versions, released on 2026-01-01, and lives in t's temporary directory.
func SupportTableFile(t testing.TB, versions ...string) string {
	t.Helper()
	p, err := WriteSupportTable(t.TempDir(), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), versions...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

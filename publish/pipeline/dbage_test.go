package pipeline

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/test/tools"
	"github.com/reloader-dev/reloader/test/trivydb"
)

// `publish --skip-db-update` judges a release with the database already in
// the cache; the real Trivy reports that database's build time, and one
// older than the limit stops the release before anything is built.
func TestSkipDBUpdateIsRefusedWithADatabaseOlderThanTheLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Trivy")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	trivy, err := tools.Binary(ctx, tools.Trivy, "trivy")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	db, err := trivydb.Write(filepath.Join(t.TempDir(), "trivy-cache"), trivydb.Options{UpdatedAt: now.Add(-36 * time.Hour),
		Advisories: []trivydb.Advisory{{ID: "CVE-2099-2202", Module: "example.com/none", Severity: "LOW", Vulnerable: []string{"< 1.0.0"}}}})
	if err != nil {
		t.Fatal(err)
	}
	runGate := func(maxAge time.Duration, skip bool) error {
		r := &run{opts: Options{Now: now, Scan: &ScanOptions{MaxDBAge: maxAge,
			Trivy: gate.TrivyOptions{Binary: trivy, CacheDir: db.CacheDir, SkipDBUpdate: skip}}}}
		return r.checkDBAge(ctx)
	}
	err = runGate(24*time.Hour, true)
	if !errors.Is(err, gate.ErrRefused) || !strings.Contains(err.Error(), "--max-db-age") || !strings.Contains(err.Error(), "36h0m0s ago") {
		t.Fatalf("a 36 h old database with a 24 h limit: %v", err)
	}
	if err := runGate(48*time.Hour, true); err != nil {
		t.Fatalf("a 36 h old database with a 48 h limit: %v", err)
	}
	if err := runGate(24*time.Hour, false); err != nil {
		t.Fatalf("a database Trivy downloads for the run is not judged by age: %v", err)
	}
}

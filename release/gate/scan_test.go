package gate

import (
	"testing"
	"time"
)

func TestParseVersionReadsTheScannerAndItsDatabase(t *testing.T) {
	info, err := parseVersion([]byte(`{"Version":"0.74.0","VulnerabilityDB":{"Version":2,"NextUpdate":"2026-11-30T06:00:00Z","UpdatedAt":"2026-11-29T06:00:00.123Z","DownloadedAt":"2026-11-29T07:00:00Z"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if info.Version != "0.74.0" || !info.DBBuilt.Equal(time.Date(2026, 11, 29, 6, 0, 0, 123e6, time.UTC)) {
		t.Fatalf("parsed %+v", info)
	}
	// A scan whose database is unknown cannot be recorded: refuse it.
	for _, bad := range []string{`{"Version":"0.74.0"}`, `{"VulnerabilityDB":{"UpdatedAt":"2026-11-29T06:00:00Z"}}`, `not json`} {
		if _, err := parseVersion([]byte(bad)); err == nil {
			t.Errorf("parseVersion(%s) accepted", bad)
		}
	}
}

func TestScanImageRefusesALayoutPathTrivyWouldSplit(t *testing.T) {
	_, _, err := ScanImage(t.Context(), TrivyOptions{Binary: "trivy", OutputDir: t.TempDir()}, "/tmp/a:b", "sha256:00", "x")
	if err == nil {
		t.Fatal("a layout path with ':' was accepted")
	}
}

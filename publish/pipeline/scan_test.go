package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/release/gate"
)

// The lock's scan record is made from what the gate saw: real Trivy reports
// (release/gate/testdata, written by Trivy itself) judged with an exception.
func TestScanRecordCarriesScannerDatabaseCountsAndAppliedExceptions(t *testing.T) {
	dir := t.TempDir()
	polPath := filepath.Join(dir, "policy.yaml")
	base, err := os.ReadFile("../../release/gate/release-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol := strings.Replace(string(base), "exceptions: []", `exceptions:
  - id: CVE-2099-0002
    package: golang.org/x/time
    justification: the affected parser is never reached
    approvedBy: Jane Doe <jane.doe@example.com>
    approvedOn: 2026-11-15
    expires: 2027-01-31`, 1)
	if pol == string(base) {
		t.Fatal("the release policy no longer says exceptions: []; adapt the test")
	}
	if err := os.WriteFile(polPath, []byte(pol), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := gate.ReadPolicy(polPath)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := gate.ReadReport("../../release/gate/testdata/reports/high-unfixed.json")
	if err != nil {
		t.Fatal(err)
	}
	res := gate.Evaluate(p, []gate.ScannedImage{{Image: "reloader linux/amd64", Report: rep}}, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if !res.Passed {
		t.Fatalf("gate: %+v", res)
	}
	built := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	sc := scanRecord(gate.ScannerInfo{Version: "0.74.0", DBDigest: "sha256:" + strings.Repeat("d", 64), DBBuilt: built}, res)
	if sc.Skipped || sc.Scanner != "trivy" || sc.ScannerVersion != "0.74.0" || !sc.DBBuilt.Equal(built) || sc.Counts["HIGH"] != 1 {
		t.Fatalf("scan record %+v", sc)
	}
	if n, ok := sc.Counts["CRITICAL"]; !ok || n != 0 || len(sc.Counts) != 5 {
		t.Fatalf("counts %v: every severity is recorded, zeros included", sc.Counts)
	}
	if len(sc.Exceptions) != 1 || sc.Exceptions[0].ID != "CVE-2099-0002" || sc.Exceptions[0].Expires != "2027-01-31" {
		t.Fatalf("exceptions %+v", sc.Exceptions)
	}
}

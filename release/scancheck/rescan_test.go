package scancheck_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/release/scancheck"
)

func report(vulns ...gate.Vulnerability) *gate.Report {
	return &gate.Report{SchemaVersion: 2, Results: []gate.ReportResult{{Target: "reloader", Vulnerabilities: vulns}}}
}

func TestARescanListsOnlyFindingsTheSignedRecordDoesNotHold(t *testing.T) {
	l := lockScannedAt()
	l.Scan.Findings = []release.ScanFinding{{ID: "CVE-2099-0002", Package: "golang.org/x/time", Severity: "HIGH"}}
	known := gate.Vulnerability{VulnerabilityID: "CVE-2099-0002", PkgName: "golang.org/x/time", Severity: gate.SeverityHigh}
	fresh := gate.Vulnerability{VulnerabilityID: "CVE-2099-0003", PkgName: "k8s.io/client-go", Severity: gate.SeverityCritical, InstalledVersion: "0.37.2"}
	res := scancheck.NewSince(l, map[string]*gate.Report{"reloader linux/amd64": report(known, fresh), "reloader linux/arm64": report(fresh)})
	if !res.RecordHasFindings || len(res.New) != 1 || res.New[0].ID != "CVE-2099-0003" || len(res.New[0].Images) != 2 {
		t.Fatalf("NewSince = %+v: want only CVE-2099-0003, found in both images", res)
	}
	if err := res.FailOn("v1.2.3", []string{"HIGH"}); err != nil {
		t.Errorf("--fail-on-new HIGH with one new CRITICAL: %v", err)
	}
	err := res.FailOn("v1.2.3", []string{"HIGH", "CRITICAL"})
	if !errors.Is(err, scancheck.ErrRefused) || !strings.Contains(err.Error(), "CRITICAL CVE-2099-0003 in k8s.io/client-go") {
		t.Errorf("--fail-on-new HIGH,CRITICAL: %v", err)
	}
}

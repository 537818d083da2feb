package review

import (
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
)

// signedScan is f with its lock recording the scan as the pipeline's gate
// step writes it: every severity counted, zeros included, and the
// exceptions the gate applied.
func signedScan(f *fixture, res *gate.Result) *fixture {
	sc := &release.Scan{Scanner: "trivy", ScannerVersion: "0.74.0", DBDigest: "sha256:" + strings.Repeat("e", 64),
		DBBuilt: time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC), Counts: map[string]int{}}
	for _, sev := range []gate.Severity{gate.SeverityCritical, gate.SeverityHigh, gate.SeverityMedium, gate.SeverityLow, gate.SeverityUnknown} {
		sc.Counts[string(sev)] = res.Counts[sev]
	}
	for _, e := range res.AppliedExceptions {
		sc.Exceptions = append(sc.Exceptions, release.ScanException{ID: e.ID, Package: e.Package, Expires: e.Expires.Format(time.DateOnly), Justification: e.Justification})
	}
	return withLockScan(f, sc)
}

func withLockScan(f *fixture, sc *release.Scan) *fixture {
	l := *f.lock
	l.Scan = sc
	return &fixture{lock: &l, sboms: f.sboms}
}

func buildErr(t *testing.T, f *fixture, res *gate.Result, rp *gate.Policy) error {
	t.Helper()
	_, err := Build(Input{Lock: f.lock, SBOMs: f.sboms, Gate: res, ReleasePolicy: rp, Licences: repoLicencePolicy(t), Now: fixtureCreated})
	return err
}

func TestTheSignedLockSuppliesTheScanWithoutAGateReport(t *testing.T) {
	fs := releases(t)
	rp := releasePolicy(t, "2027-01-31")
	f := signedScan(fs[oldSync], gateResult(t, "high-fixed.json", rp))
	r := build(t, f, nil, nil)
	v := r.Vulnerabilities
	if v.GateReport || !v.Scanned() || !v.Passed || v.Status() != "passed" {
		t.Errorf("gate report %v, scanned %v, passed %v, status %q; want the lock's passed scan", v.GateReport, v.Scanned(), v.Passed, v.Status())
	}
	if v.Scan == nil || v.Scan.Scanner != "trivy" || v.Scan.ScannerVersion != "0.74.0" || v.Scan.DBDigest != "sha256:"+strings.Repeat("e", 64) {
		t.Fatalf("scan record %+v, want trivy 0.74.0 with the lock's database digest", v.Scan)
	}
	if len(v.Scan.Counts) != 5 || v.Scan.Counts[0].Severity != "CRITICAL" || v.Scan.Counts[1] != (SeverityCount{"HIGH", 1}) {
		t.Errorf("counts %+v, want five severities, most severe first, with the one HIGH finding", v.Scan.Counts)
	}
	// A lock written before exceptions had kinds records none: an accepted risk.
	want := Exception{ID: "CVE-2099-0001", Package: "golang.org/x/sync", Expires: "2027-01-31", Source: ExceptionFromLock, Kind: gate.KindAcceptedRisk,
		Justification: "errgroup's vulnerable path needs a cancelled parent context, which the app never has"}
	if len(v.Exceptions) != 1 || v.Exceptions[0] != want {
		t.Errorf("exceptions %+v, want only the lock's %+v", v.Exceptions, want)
	}
	checks, _ := ParseChecks([]string{CheckVulnerability})
	if got := r.Failures(checks); len(got) != 0 {
		t.Errorf("--fail-on vulnerability: %q, want none for a passed scan in the lock", got)
	}
	html, err := r.HTML(nil)
	if err != nil {
		t.Fatal(err)
	}
	md, err := r.Markdown(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{string(html), string(md)} {
		for _, s := range []string{"trivy 0.74.0", "sha256:" + strings.Repeat("e", 64), "2026-11-29 06:00 UTC", "1 HIGH", "CVE-2099-0001", ExceptionFromLock} {
			if !strings.Contains(doc, s) {
				t.Errorf("the review does not show %q", s)
			}
		}
	}
	vex, err := OpenVEX(f.lock, r)
	if err != nil || !strings.Contains(string(vex), "CVE-2099-0001") {
		t.Errorf("OpenVEX from the lock's exceptions: %v\n%s", err, vex)
	}

	// The exception renewed in a later policy is the lock's, once: what
	// was signed is what the release shipped with.
	later := releasePolicy(t, "2027-06-30")
	r = build(t, f, nil, later)
	if len(r.Vulnerabilities.Exceptions) != 1 || r.Vulnerabilities.Exceptions[0].Expires != "2027-01-31" {
		t.Errorf("exceptions %+v, want the lock's one, expiring 2027-01-31", r.Vulnerabilities.Exceptions)
	}
}

func TestAGateReportMustAgreeWithTheSignedLock(t *testing.T) {
	fs := releases(t)
	rp := releasePolicy(t, "2027-01-31")
	excepted := gateResult(t, "high-fixed.json", rp)
	f := signedScan(fs[oldSync], excepted)
	r := build(t, f, excepted, rp)
	if !r.Vulnerabilities.GateReport || len(r.Vulnerabilities.Findings) == 0 || r.Vulnerabilities.Scan == nil {
		t.Errorf("the matching gate report adds its findings to the lock's record: %+v", r.Vulnerabilities)
	}
	for _, tc := range []struct {
		name string
		f    *fixture
		res  *gate.Result
		want string
	}{
		{"counts differ", f, gateResult(t, "clean.json", rp), "the report is not this release's"},
		{"report failed, lock passed", f, gateResult(t, "high-unfixed.json", rp), "the gate failed"},
		{"lock says no scan", withLockScan(fs[oldSync], &release.Scan{Skipped: true}), excepted, "without a scan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := buildErr(t, tc.f, tc.res, rp)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestAReleaseMadeWithoutAScanFailsTheVulnerabilityCheck(t *testing.T) {
	r := build(t, withLockScan(releases(t)[newSync], &release.Scan{Skipped: true}), nil, nil)
	if r.Vulnerabilities.Status() != "scan skipped" {
		t.Errorf("status %q, want scan skipped", r.Vulnerabilities.Status())
	}
	checks, _ := ParseChecks([]string{CheckVulnerability})
	got := r.Failures(checks)
	if len(got) != 1 || !strings.Contains(got[0], "--no-scan") {
		t.Errorf("failures %q, want one naming --no-scan", got)
	}
}

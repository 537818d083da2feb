package scancheck_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/scancheck"
)

var cut = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// lockScannedAt is a release cut on cut with a database built a day before
// and one accepted risk until 2027-01-31.
func lockScannedAt() *release.Lock {
	return &release.Lock{Version: "v1.2.3", Created: cut, Scan: &release.Scan{Scanner: "trivy", ScannerVersion: "0.74.0",
		DBDigest: "sha256:" + strings.Repeat("d", 64), DBBuilt: cut.Add(-24 * time.Hour),
		Counts:     map[string]int{"CRITICAL": 0, "HIGH": 1, "MEDIUM": 2, "LOW": 0, "UNKNOWN": 0},
		Exceptions: []release.ScanException{{ID: "CVE-2099-0002", Package: "golang.org/x/time", Expires: "2027-01-31", Justification: "never reached"}}}}
}

func TestAReleaseWithAFreshScanAndValidExceptionsPasses(t *testing.T) {
	res, err := scancheck.Policy{Now: cut.Add(48 * time.Hour)}.Check(lockScannedAt())
	if err != nil || !res.Passed || !res.Checked || len(res.Warnings) != 0 || res.DBAge != "3d0h" || res.MaxAge != "30d0h" {
		t.Fatalf("Check = %+v, %v", res, err)
	}
}

func TestAnExceptionThatExpiredSinceTheReleaseWasCutRefusesIt(t *testing.T) {
	res, err := scancheck.Policy{Now: time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC)}.Check(lockScannedAt())
	var re *scancheck.RefusedError
	if !errors.Is(err, scancheck.ErrRefused) || !errors.As(err, &re) || res.Passed {
		t.Fatalf("Check = %+v, %v; want a refusal", res, err)
	}
	for _, want := range []string{"v1.2.3", "CVE-2099-0002", "golang.org/x/time", "2027-01-31"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not name %q: %v", want, err)
		}
	}
}

func TestAStaleDatabaseWarnsByDefaultAndRefusesWhenTheUserSetTheLimit(t *testing.T) {
	later := cut.Add(40 * 24 * time.Hour)
	res, err := scancheck.Policy{Now: later}.Check(lockScannedAt())
	if err != nil || !res.Passed || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "--max-scan-age") {
		t.Fatalf("default: %+v, %v; want a pass with a warning", res, err)
	}
	res, err = scancheck.Policy{Now: later, MaxAge: 30 * 24 * time.Hour, EnforceMaxAge: true}.Check(lockScannedAt())
	if !errors.Is(err, scancheck.ErrRefused) || !strings.Contains(err.Error(), "older than the 30d0h allowed") {
		t.Fatalf("--max-scan-age 30d: %+v, %v; want a refusal naming the limit", res, err)
	}
	l := lockScannedAt()
	l.Scan.DBBuilt = time.Time{}
	if _, err := (scancheck.Policy{Now: later, EnforceMaxAge: true}).Check(l); !errors.Is(err, scancheck.ErrRefused) {
		t.Fatalf("a record without a database build time passed an explicit age limit: %v", err)
	}
}

func TestTheConsumersOwnSeverityThresholdAppliesToTheRecordedCounts(t *testing.T) {
	if _, err := (scancheck.Policy{Now: cut, FailOn: []string{"CRITICAL"}}).Check(lockScannedAt()); err != nil {
		t.Fatalf("no CRITICAL recorded: %v", err)
	}
	_, err := scancheck.Policy{Now: cut, FailOn: []string{"HIGH", "CRITICAL"}}.Check(lockScannedAt())
	if !errors.Is(err, scancheck.ErrRefused) || !strings.Contains(err.Error(), "1 HIGH") || !strings.Contains(err.Error(), "CVE-2099-0002") {
		t.Fatalf("--fail-on-severity HIGH,CRITICAL with 1 HIGH: %v", err)
	}
}

func TestAnUnscannedReleaseHasNothingToCheckUnlessTheUserAskedForLimits(t *testing.T) {
	l := &release.Lock{Version: "v1.2.3", Scan: &release.Scan{Skipped: true}}
	if res, err := (scancheck.Policy{Now: cut}).Check(l); err != nil || res.Checked {
		t.Fatalf("default: %+v, %v", res, err)
	}
	if _, err := (scancheck.Policy{Now: cut, FailOn: []string{"HIGH"}}).Check(l); !errors.Is(err, scancheck.ErrRefused) {
		t.Fatalf("--fail-on-severity on an unscanned release: %v", err)
	}
}

func TestScanPolicyFlagValuesAreParsedStrictly(t *testing.T) {
	if d, err := scancheck.ParseAge("30d"); err != nil || d != 720*time.Hour {
		t.Errorf("30d = %v, %v", d, err)
	}
	if d, err := scancheck.ParseAge("36h"); err != nil || d != 36*time.Hour {
		t.Errorf("36h = %v, %v", d, err)
	}
	for _, bad := range []string{"", "0d", "-3d", "3.5d", "30 days", "1x"} {
		if _, err := scancheck.ParseAge(bad); err == nil {
			t.Errorf("ParseAge(%q) accepted", bad)
		}
	}
	if s, err := scancheck.ParseSeverities("high, Critical,HIGH"); err != nil || strings.Join(s, ",") != "HIGH,CRITICAL" {
		t.Errorf("ParseSeverities = %v, %v", s, err)
	}
	if _, err := scancheck.ParseSeverities("HIGH,SEVERE"); err == nil {
		t.Error("an unknown severity was accepted")
	}
}

// The flag parsers take what users type; they must never panic and must
// refuse what they cannot read rather than guess.
func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"30d", "72h", "0d", "1x", "999999999999999999d", "-1h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, err := scancheck.ParseAge(s); err == nil && d <= 0 {
			t.Fatalf("ParseAge(%q) = %v: a non-positive limit accepted", s, d)
		}
		if sev, err := scancheck.ParseSeverities(s); err == nil {
			for _, v := range sev {
				if v == "" {
					t.Fatalf("ParseSeverities(%q) gave an empty severity", s)
				}
			}
		}
	})
}

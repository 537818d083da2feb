package gate

import (
	"os"
	"path/filepath"
	"testing"
)

func FuzzParseReport(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "reports", "*.json"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseReport(data)
		if err != nil {
			return
		}
		// Whatever parses must be judgeable and keep its invariants.
		if r.SchemaVersion != 2 || len(r.Results) == 0 {
			t.Fatalf("accepted report breaks invariants: %+v", r)
		}
		p := &Policy{APIVersion: PolicyAPIVersion, FailOn: []Severity{SeverityHigh, SeverityCritical}}
		res := Evaluate(p, []ScannedImage{{Image: "fuzz", Report: r}}, releaseDay)
		for _, fd := range res.Findings {
			if (fd.Severity == SeverityHigh || fd.Severity == SeverityCritical) && !fd.Decision.Blocks() {
				t.Fatalf("HIGH/CRITICAL finding without exception does not block: %+v", fd)
			}
		}
	})
}

func FuzzParsePolicy(f *testing.F) {
	if b, err := os.ReadFile("release-policy.yaml"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("apiVersion: reloader.dev/release-policy/v1\nfailOn: [HIGH, CRITICAL]\nexceptions:\n  - id: CVE-2099-0002\n    package: p\n    justification: a long enough justification text\n    approvedBy: a\n    approvedOn: 2026-11-15\n    expires: 2027-01-31\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePolicy(data)
		if err != nil {
			return
		}
		if !p.failsOn(SeverityHigh) || !p.failsOn(SeverityCritical) {
			t.Fatalf("accepted policy does not fail on HIGH and CRITICAL: %+v", p)
		}
		for _, e := range p.Exceptions {
			if e.Expires.IsZero() || e.Package == "" {
				t.Fatalf("accepted exception without expiry or package: %+v", e)
			}
		}
	})
}

func FuzzParseVersion(f *testing.F) {
	f.Add([]byte(`{"Version":"0.74.0","VulnerabilityDB":{"Version":2,"UpdatedAt":"2026-11-29T06:00:00Z"}}`))
	f.Add([]byte(`{"Version":"0.74.0"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := parseVersion(data)
		if err != nil {
			return
		}
		if info.Version == "" || info.DBBuilt.IsZero() {
			t.Fatalf("accepted version output without a version or database: %+v", info)
		}
	})
}

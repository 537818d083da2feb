package gate

import (
	"strings"
	"testing"
)

func unknownFinding() ScannedImage {
	return ScannedImage{Image: "reloader linux/amd64", Report: &Report{SchemaVersion: 2, Results: []ReportResult{{
		Target: "reloader", Vulnerabilities: []Vulnerability{{VulnerabilityID: "CVE-2099-0009", PkgName: "golang.org/x/net",
			InstalledVersion: "0.1.0", Severity: SeverityUnknown}}}}}}
}

func TestAnUnknownSeverityFindingBlocksByDefault(t *testing.T) {
	res := evaluate(t, policyWith(t, ""), unknownFinding())
	if res.Passed {
		t.Fatal("an UNKNOWN finding passed a policy that does not allow it")
	}
	if f := res.Findings[0]; f.Decision != DecisionFail || !strings.Contains(f.Reason, "allowUnknown") {
		t.Fatalf("finding %+v: want FAIL telling how to decide", f)
	}
}

func TestAnUnknownSeverityFindingPassesOnlyWhenThePolicyAllowsIt(t *testing.T) {
	if res := evaluate(t, policyWith(t, "allowUnknown: true\n"), unknownFinding()); !res.Passed || res.Findings[0].Decision != DecisionBelow {
		t.Fatalf("allowUnknown: true: %+v", res)
	}
	if res := evaluate(t, policyWith(t, `exceptions:
  - id: CVE-2099-0009
    package: golang.org/x/net
    justification: the HTTP/2 server of x/net is not linked into the controller
    approvedBy: Jane Doe <jane.doe@example.com>
    approvedOn: 2026-11-15
    expires: 2027-01-31
`), unknownFinding()); !res.Passed || res.Findings[0].Decision != DecisionExcepted {
		t.Fatalf("an exception for the UNKNOWN finding: %+v", res)
	}
}

func TestAPolicyCannotBothFailOnAndAllowUnknown(t *testing.T) {
	_, err := ParsePolicy([]byte("apiVersion: reloader.dev/release-policy/v1\nfailOn: [HIGH, CRITICAL, UNKNOWN]\nallowUnknown: true\n"))
	if err == nil || !strings.Contains(err.Error(), "allowUnknown") {
		t.Fatalf("err = %v", err)
	}
}

// Policy files written before exceptions had a kind still load, and claim
// no more than they did: an accepted risk, never "not affected".
func TestAnExceptionWithoutAKindIsAnAcceptedRisk(t *testing.T) {
	p := policyWith(t, `exceptions:
  - id: CVE-2099-0002
    package: golang.org/x/time
    justification: the affected parser is never reached from the controller
    approvedBy: Jane Doe <jane.doe@example.com>
    approvedOn: 2026-11-15
    expires: 2027-01-31
`)
	if k := p.Exceptions[0].EffectiveKind(); k != KindAcceptedRisk {
		t.Fatalf("kind %q, want %q", k, KindAcceptedRisk)
	}
}

func TestANotAffectedExceptionNeedsAnOpenVEXJustification(t *testing.T) {
	base := "apiVersion: reloader.dev/release-policy/v1\nfailOn: [HIGH, CRITICAL]\nexceptions:\n  - id: CVE-2099-0002\n    package: golang.org/x/time\n    justification: the affected parser is never reached from the controller\n    approvedBy: Jane Doe <jane.doe@example.com>\n    approvedOn: 2026-11-15\n    expires: 2027-01-31\n"
	for name, c := range map[string]struct {
		extra, wantErr string
	}{
		"not_affected with an enum value": {"    kind: not_affected\n    vexJustification: vulnerable_code_not_in_execute_path\n", ""},
		"not_affected without one":        {"    kind: not_affected\n", "needs vexJustification"},
		"not_affected with free text":     {"    kind: not_affected\n    vexJustification: we checked\n", "needs vexJustification"},
		"accepted_risk with one":          {"    kind: accepted_risk\n    vexJustification: component_not_present\n", "only for kind not_affected"},
		"an unknown kind":                 {"    kind: false_positive\n", `kind "false_positive"`},
	} {
		_, err := ParsePolicy([]byte(base + c.extra))
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "CVE-2099-0002")):
			t.Errorf("%s: err = %v, want one naming the exception and %q", name, err, c.wantErr)
		}
	}
}

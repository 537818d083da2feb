package gate

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// releaseDay is the "now" of every gate test: exceptions are judged
// against it, not against the wall clock, so the tests never rot.
var releaseDay = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func report(t *testing.T, name string) ScannedImage {
	t.Helper()
	r, err := ReadReport(filepath.Join("testdata", "reports", name))
	if err != nil {
		t.Fatalf("reading fixture %s: %v", name, err)
	}
	return ScannedImage{Image: strings.TrimSuffix(name, ".json"), Report: r}
}

func policyWith(t *testing.T, exceptions string) *Policy {
	t.Helper()
	p, err := ParsePolicy([]byte("apiVersion: reloader.dev/release-policy/v1\nfailOn: [HIGH, CRITICAL]\n" + exceptions))
	if err != nil {
		t.Fatalf("parsing policy: %v", err)
	}
	return p
}

func evaluate(t *testing.T, p *Policy, images ...ScannedImage) Result {
	t.Helper()
	res := Evaluate(p, images, releaseDay)
	var table bytes.Buffer
	if err := res.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	t.Logf("gate output:\n%s", table.String())
	return res
}

func TestGateFailsOnHighFindingWithFix(t *testing.T) {
	res := evaluate(t, policyWith(t, ""), report(t, "high-fixed.json"))
	if res.Passed {
		t.Fatal("a HIGH finding with a released fix passed the gate")
	}
	if f := res.Findings[0]; f.Decision != DecisionFail || f.VulnerabilityID != "CVE-2099-0001" {
		t.Fatalf("finding = %+v, want FAIL for CVE-2099-0001", f)
	}
}

func TestGateFailsOnHighFindingWithoutFix(t *testing.T) {
	res := evaluate(t, policyWith(t, ""), report(t, "high-unfixed.json"))
	if res.Passed {
		t.Fatal("an unfixed HIGH finding passed the gate")
	}
	if f := res.Findings[0]; f.Decision != DecisionFail || !strings.Contains(f.Reason, "no fix") {
		t.Fatalf("finding = %+v, want FAIL explaining there is no fix", f)
	}
	if f := res.Findings[1]; f.Severity != SeverityMedium || f.Decision != DecisionBelow {
		t.Fatalf("finding = %+v, want the MEDIUM finding below the threshold", f)
	}
}

func TestGatePassesACleanImage(t *testing.T) {
	if res := evaluate(t, policyWith(t, ""), report(t, "clean.json")); !res.Passed || len(res.Findings) != 0 {
		t.Fatalf("clean report: %+v", res)
	}
}

const exceptionUnfixed = `exceptions:
  - id: CVE-2099-0002
    package: golang.org/x/time
    justification: the affected parser is never reached from the controller's code paths
    approvedBy: Jane Doe <jane.doe@example.com>
    approvedOn: %a
    expires: %s
`

// unfixedException is exceptionUnfixed expiring on expires, approved 85
// days before (within the default maximum lifetime of 90 days).
func unfixedException(expires string) string {
	t, err := time.Parse(time.DateOnly, expires)
	if err != nil {
		panic(err)
	}
	return strings.NewReplacer("%a", t.AddDate(0, 0, -85).Format(time.DateOnly), "%s", expires).Replace(exceptionUnfixed)
}

func TestGatePassesWithUnexpiredException(t *testing.T) {
	p := policyWith(t, unfixedException("2027-01-31"))
	res := evaluate(t, p, report(t, "high-unfixed.json"), report(t, "clean.json"))
	if !res.Passed {
		t.Fatalf("gate failed although the only finding has an unexpired exception: %+v", res)
	}
	if f := res.Findings[0]; f.Decision != DecisionExcepted || !strings.Contains(f.Reason, "never reached") {
		t.Fatalf("finding = %+v, want EXCEPTED carrying the justification", f)
	}
	// What the lock records: the exception that was applied, and the
	// findings counted by severity.
	if len(res.AppliedExceptions) != 1 || res.AppliedExceptions[0].ID != "CVE-2099-0002" || len(res.UnusedExceptions) != 0 {
		t.Fatalf("applied %+v, unused %+v", res.AppliedExceptions, res.UnusedExceptions)
	}
	if res.Counts[SeverityHigh] != 1 {
		t.Fatalf("counts %v, want one HIGH", res.Counts)
	}
}

func TestGateFailsWhenTheSameExceptionHasExpired(t *testing.T) {
	p := policyWith(t, unfixedException("2026-11-30"))
	res := evaluate(t, p, report(t, "high-unfixed.json"))
	if res.Passed {
		t.Fatal("an expired exception let the release pass")
	}
	if f := res.Findings[0]; f.Decision != DecisionExpired {
		t.Fatalf("finding = %+v, want EXPIRED-EXCEPTION", f)
	}
}

func TestAnExceptionApprovedOnALaterDateAppliesToNothingAndFailsTheRelease(t *testing.T) {
	p := policyWith(t, unfixedException("2027-01-31")) // approved 85 days before its expiry
	early := p.Exceptions[0].ApprovedOn.AddDate(0, 0, -1)
	res := Evaluate(p, []ScannedImage{report(t, "high-unfixed.json")}, early)
	if res.Passed {
		t.Fatal("an exception dated ahead of the gate accepted a finding")
	}
	if f := res.Findings[0]; f.Decision != DecisionFail || !strings.Contains(f.Reason, "approved on") {
		t.Fatalf("finding = %+v, want FAIL saying when the exception was approved", f)
	}
	if len(res.PrematureExceptions) != 1 || len(res.AppliedExceptions) != 0 {
		t.Fatalf("premature %+v, applied %+v", res.PrematureExceptions, res.AppliedExceptions)
	}
	if res := Evaluate(p, []ScannedImage{report(t, "high-unfixed.json")}, p.Exceptions[0].ApprovedOn.Time); !res.Passed {
		t.Fatal("an exception does not hold on the day it was approved")
	}
}

func TestExceptionExpiresAtTheStartOfItsDay(t *testing.T) {
	p := policyWith(t, unfixedException("2026-12-01"))
	if res := Evaluate(p, []ScannedImage{report(t, "high-unfixed.json")}, releaseDay); res.Passed {
		t.Fatal("exception expiring today still holds")
	}
	if res := Evaluate(p, []ScannedImage{report(t, "high-unfixed.json")}, releaseDay.Add(-13*time.Hour)); !res.Passed {
		t.Fatal("exception expiring tomorrow does not hold")
	}
}

func TestExpiredExceptionFailsEvenWhenNothingMatchesIt(t *testing.T) {
	p := policyWith(t, unfixedException("2026-01-01"))
	res := evaluate(t, p, report(t, "clean.json"))
	if res.Passed || len(res.ExpiredExceptions) != 1 {
		t.Fatalf("stale expired exception did not fail the release: %+v", res)
	}
}

func TestExceptionOnlyCoversItsOwnPackage(t *testing.T) {
	p := policyWith(t, `exceptions:
  - id: CVE-2099-0002
    package: example.com/some/other
    justification: written for another package and must not leak to this one
    approvedBy: Jane Doe <jane.doe@example.com>
    approvedOn: 2026-11-15
    expires: 2027-01-31
`)
	if res := evaluate(t, p, report(t, "high-unfixed.json")); res.Passed {
		t.Fatal("an exception for another package accepted the finding")
	}
}

func TestMalformedMissingOrEmptyReportsFailClosed(t *testing.T) {
	for _, name := range []string{"malformed.json", "empty.json", "does-not-exist.json"} {
		if _, err := ReadReport(filepath.Join("testdata", "reports", name)); err == nil {
			t.Errorf("%s: parsed without error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	if res := Evaluate(policyWith(t, ""), []ScannedImage{{Image: "reloader linux/amd64"}}, releaseDay); res.Passed {
		t.Error("an image without a report passed the gate")
	}
	if res := Evaluate(policyWith(t, ""), nil, releaseDay); res.Passed {
		t.Error("a gate without any report passed")
	}
}

func TestReportsThatCannotBeTrustedAreRejected(t *testing.T) {
	cases := map[string]string{
		"schema 1":        `{"SchemaVersion":1,"ArtifactName":"x","Results":[{"Target":"t"}]}`,
		"no artifact":     `{"SchemaVersion":2,"Results":[{"Target":"t"}]}`,
		"no results":      `{"SchemaVersion":2,"ArtifactName":"x"}`,
		"unknown sev":     `{"SchemaVersion":2,"ArtifactName":"x","Results":[{"Target":"t","Vulnerabilities":[{"VulnerabilityID":"CVE-1-1","PkgName":"p","Severity":"SEVERE"}]}]}`,
		"no package":      `{"SchemaVersion":2,"ArtifactName":"x","Results":[{"Target":"t","Vulnerabilities":[{"VulnerabilityID":"CVE-1-1","Severity":"HIGH"}]}]}`,
		"trailing object": `{"SchemaVersion":2,"ArtifactName":"x","Results":[{"Target":"t"}]}{}`,
		"json null":       `null`,
	}
	for name, doc := range cases {
		if _, err := ParseReport([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestMediumFindingsDoNotBlockByDefault(t *testing.T) {
	r, err := ParseReport([]byte(`{"SchemaVersion":2,"ArtifactName":"x","Results":[{"Target":"t","Vulnerabilities":[{"VulnerabilityID":"CVE-2099-9","PkgName":"p","Severity":"MEDIUM"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if res := evaluate(t, policyWith(t, ""), ScannedImage{Image: "x", Report: r}); !res.Passed || res.Findings[0].Decision != DecisionBelow {
		t.Fatalf("MEDIUM finding: %+v", res)
	}
}

func TestPolicyCannotWeakenTheGate(t *testing.T) {
	cases := map[string]string{
		"drops HIGH":       "apiVersion: reloader.dev/release-policy/v1\nfailOn: [CRITICAL]\n",
		"misspelt field":   "apiVersion: reloader.dev/release-policy/v1\nfailOn: [HIGH, CRITICAL]\nexceptions:\n  - id: CVE-2099-1\n    package: p\n    justification: a long enough justification text\n    expire: 2027-01-01\n",
		"no expiry":        "apiVersion: reloader.dev/release-policy/v1\nfailOn: [HIGH, CRITICAL]\nexceptions:\n  - id: CVE-2099-1\n    package: p\n    justification: a long enough justification text\n",
		"bad date":         "apiVersion: reloader.dev/release-policy/v1\nfailOn: [HIGH, CRITICAL]\nexceptions:\n  - id: CVE-2099-1\n    package: p\n    justification: a long enough justification text\n    approvedBy: a\n    approvedOn: 2026-11-15\n    expires: someday\n",
		"short reason":     "apiVersion: reloader.dev/release-policy/v1\nfailOn: [HIGH, CRITICAL]\nexceptions:\n  - id: CVE-2099-1\n    package: p\n    justification: n/a\n    approvedBy: a\n    approvedOn: 2026-11-15\n    expires: 2027-01-01\n",
		"no package":       "apiVersion: reloader.dev/release-policy/v1\nfailOn: [HIGH, CRITICAL]\nexceptions:\n  - id: CVE-2099-1\n    justification: a long enough justification text\n    approvedBy: a\n    approvedOn: 2026-11-15\n    expires: 2027-01-01\n",
		"not a vuln id":    "apiVersion: reloader.dev/release-policy/v1\nfailOn: [HIGH, CRITICAL]\nexceptions:\n  - id: '*'\n    package: p\n    justification: a long enough justification text\n    approvedBy: a\n    approvedOn: 2026-11-15\n    expires: 2027-01-01\n",
		"wrong apiVersion": "apiVersion: v0\nfailOn: [HIGH, CRITICAL]\n",
		"empty":            "",
		"unknown severity": "apiVersion: reloader.dev/release-policy/v1\nfailOn: [HIGH, CRITICAL, SEVERE]\n",
	}
	for name, doc := range cases {
		if _, err := ParsePolicy([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCommittedReleasePolicyIsValid(t *testing.T) {
	data, err := os.ReadFile("release-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParsePolicy(data); err != nil {
		t.Fatal(err)
	}
}

func TestBuiltInPolicyIsTheFileAsWritten(t *testing.T) {
	file, err := os.ReadFile("release-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(DefaultPolicyYAML(), file) {
		t.Error("DefaultPolicyYAML is not release/gate/release-policy.yaml as written")
	}
	builtin, err := LoadPolicy("")
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := LoadPolicy("release-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(builtin, fromFile) {
		t.Errorf("the built-in policy %+v is not the file's %+v", builtin, fromFile)
	}
}

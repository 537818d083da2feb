package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
)

// run executes the CLI and returns the exit code and stdout followed by
// stderr; execute keeps stdout (what a script parses) apart.
func run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, out, errOut := execute(args...)
	return code, out + errOut
}

func execute(args ...string) (int, string, string) {
	root := newRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	code := cli.Report("reloader-release", root.ExecuteContext(context.Background()), &errOut)
	return code, out.String(), errOut.String()
}

const reports = "../../release/gate/testdata/reports/"

func TestGateCommandExitCodes(t *testing.T) {
	pol := "--policy=../../release/gate/release-policy.yaml"
	cases := []struct {
		name string
		args []string
		want int
	}{
		{"clean report passes", []string{"gate", pol, reports + "clean.json"}, cli.ExitOK},
		{"HIGH with a fix fails", []string{"gate", pol, reports + "high-fixed.json"}, cli.ExitRefused},
		{"HIGH without a fix fails", []string{"gate", pol, reports + "high-unfixed.json"}, cli.ExitRefused},
		{"malformed report fails", []string{"gate", pol, reports + "malformed.json"}, cli.ExitRefused},
		{"missing report fails", []string{"gate", pol, reports + "nope.json"}, cli.ExitRefused},
		{"clean plus failing fails", []string{"gate", pol, reports + "clean.json", reports + "high-fixed.json"}, cli.ExitRefused},
		{"unreadable policy is a usage error", []string{"gate", "--policy=nope.yaml", reports + "clean.json"}, cli.ExitUsage},
		{"no report is a usage error", []string{"gate", pol}, cli.ExitUsage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := run(t, c.args...)
			if code != c.want {
				t.Fatalf("exit %d, want %d\n%s", code, c.want, out)
			}
		})
	}
}

func TestGateCommandJSONForScripts(t *testing.T) {
	code, out, _ := execute("gate", "--policy=../../release/gate/release-policy.yaml", "-o", "json", reports+"high-unfixed.json")
	if code != cli.ExitRefused {
		t.Fatalf("exit %d", code)
	}
	var res struct {
		Passed   bool `json:"passed"`
		Findings []struct {
			VulnerabilityID string `json:"vulnerabilityID"`
			Decision        string `json:"decision"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if res.Passed || res.Findings[0].VulnerabilityID != "CVE-2099-0002" || res.Findings[0].Decision != "FAIL" {
		t.Fatalf("unexpected verdict: %+v", res)
	}
}

func TestGateCommandHonoursExceptionsUntilTheyExpire(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	doc := `apiVersion: reloader.dev/release-policy/v1
failOn: [HIGH, CRITICAL]
exceptions:
  - id: CVE-2099-0002
    package: golang.org/x/time
    justification: the rate limiter is not used on any request path of the controller
    approvedBy: Jane Doe <jane.doe@example.com>
    approvedOn: 2026-11-15
    expires: 2027-01-31
`
	if err := os.WriteFile(pol, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := run(t, "gate", "--policy", pol, "--now", "2027-01-30T23:59:59Z", reports+"high-unfixed.json"); code != cli.ExitOK {
		t.Fatalf("before expiry: exit %d\n%s", code, out)
	}
	code, out := run(t, "gate", "--policy", pol, "--now", "2027-01-31T00:00:00Z", reports+"high-unfixed.json")
	if code != cli.ExitRefused || !strings.Contains(out, "EXPIRED-EXCEPTION") {
		t.Fatalf("on the expiry date: exit %d\n%s", code, out)
	}
}

func TestVerifyCommandNeedsSomeoneToTrust(t *testing.T) {
	if code, out := run(t, "verify", "--lock", "x.json"); code != cli.ExitUsage || !strings.Contains(out, "whom to trust") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if code, _ := run(t, "verify", "--lock", "x.json", "--certificate-identity", "me"); code != cli.ExitUsage {
		t.Fatalf("keyless without issuer and trusted root: exit %d", code)
	}
}

func TestEveryCommandHasHelpWithExamples(t *testing.T) {
	for _, c := range newRoot().Commands() {
		if c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if c.Example == "" {
			t.Errorf("%s has no examples in --help", c.Name())
		}
	}
}

func TestLocalCommandRefusesAnAmbiguousOrUnknownRequest(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1764500000")
	t.Setenv("PATH", t.TempDir()) // no trivy anywhere
	cases := map[string][]string{
		"no trivy and no --no-scan":  {"local", "--commit", strings.Repeat("a", 40)},
		"--trivy and --no-scan":      {"local", "--commit", strings.Repeat("a", 40), "--trivy", "trivy", "--no-scan"},
		"a platform Reloader lacks":  {"local", "--commit", strings.Repeat("a", 40), "--no-scan", "--platforms", "windows/amd64"},
		"a platform that is no such": {"local", "--commit", strings.Repeat("a", 40), "--no-scan", "--platforms", "amd64"},
	}
	for name, args := range cases {
		if code, out := run(t, append(args, "--out", t.TempDir())...); code != cli.ExitUsage {
			t.Errorf("%s: exit %d, want %d\n%s", name, code, cli.ExitUsage, out)
		}
	}
}

// The two stages must be asked for together: a publish from a build stage
// needs the digests that stage reported, and a digest that is not one is
// refused before anything runs.
func TestPublishFromABuildNeedsTheDigestsTheBuildReported(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1764500000")
	common := []string{"publish", "--registry", "registry.example/reloader", "--version", "v1.2.3", "--commit", strings.Repeat("a", 40),
		"--ubi-base", "registry.example/ubi@sha256:" + strings.Repeat("b", 64), "--trivy", "trivy", "--key", "cosign.key", "--out", t.TempDir(),
		"--license-file", "../../LICENSE"}
	cases := map[string][]string{
		"--from-build without --expect-index": {"--from-build", t.TempDir()},
		"--expect-index without --from-build": {"--expect-index", "reloader@sha256:" + strings.Repeat("c", 64)},
		"an --expect-index that is no digest": {"--from-build", t.TempDir(), "--expect-index", "reloader@latest"},
	}
	for name, args := range cases {
		if code, out := run(t, append(common, args...)...); code != cli.ExitUsage || !strings.Contains(out, "--") {
			t.Errorf("%s: exit %d, want %d\n%s", name, code, cli.ExitUsage, out)
		}
	}
	if code, out := run(t, "build", "--version", "v1.2.3"); code != cli.ExitUsage || !strings.Contains(out, "--registry, --version and --ubi-base are required") {
		t.Errorf("build without --registry: exit %d\n%s", code, out)
	}
}

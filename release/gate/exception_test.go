package gate

import (
	"strings"
	"testing"
)

func exceptionPolicy(extra, approval string) string {
	return "apiVersion: reloader.dev/release-policy/v1\nfailOn: [HIGH, CRITICAL]\n" + extra + `exceptions:
  - id: CVE-2099-0002
    package: golang.org/x/time
    justification: the affected parser is never reached from the controller's code paths
` + approval
}

// Every exception names who approved it and when, and lasts at most the
// policy's maxExceptionLifetime (90 days unless it says less or more, never
// more than 365) from its approval to its expiry; an error names the
// exception and what is wrong.
func TestAnExceptionWithoutApproverOrBeyondItsLifetimeIsRefusedNamingIt(t *testing.T) {
	cases := []struct {
		name, extra, approval, want string
	}{
		{"approved, 90 days", "", "    approvedBy: Jane Doe <jane.doe@example.com>\n    approvedOn: 2026-11-01\n    expires: 2027-01-30\n", ""},
		{"no approver", "", "    approvedOn: 2026-11-01\n    expires: 2027-01-30\n", "exception 0 (CVE-2099-0002 in golang.org/x/time): no approvedBy"},
		{"a blank approver", "", "    approvedBy: ' '\n    approvedOn: 2026-11-01\n    expires: 2027-01-30\n", "no approvedBy"},
		{"no approval date", "", "    approvedBy: jane\n    expires: 2027-01-30\n", "exception 0 (CVE-2099-0002 in golang.org/x/time): no approvedOn"},
		{"91 days", "", "    approvedBy: jane\n    approvedOn: 2026-11-01\n    expires: 2027-01-31\n", "lasts 91 days from approvedOn 2026-11-01 to expires 2027-01-31, more than the maxExceptionLifetime of 90d"},
		{"a year open-ended", "", "    approvedBy: jane\n    approvedOn: 2026-11-01\n    expires: 2099-01-01\n", "more than the maxExceptionLifetime of 90d"},
		{"approved after it expires", "", "    approvedBy: jane\n    approvedOn: 2027-02-01\n    expires: 2027-01-31\n", "is not before expires"},
		{"a shorter maximum", "maxExceptionLifetime: 30d\n", "    approvedBy: jane\n    approvedOn: 2026-11-01\n    expires: 2026-12-15\n", "more than the maxExceptionLifetime of 30d"},
		{"a longer maximum", "maxExceptionLifetime: 180d\n", "    approvedBy: jane\n    approvedOn: 2026-11-01\n    expires: 2027-04-01\n", ""},
		{"a maximum over a year", "maxExceptionLifetime: 366d\n", "    approvedBy: jane\n    approvedOn: 2026-11-01\n    expires: 2026-12-01\n", "more than the 365d any policy may allow"},
		{"a maximum that is not days", "maxExceptionLifetime: 3m\n", "    approvedBy: jane\n    approvedOn: 2026-11-01\n    expires: 2026-12-01\n", `lifetime "3m" is not a whole number of days`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(exceptionPolicy(c.extra, c.approval)))
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// The shipped release policy states the default maximum lifetime.
func TestTheShippedPolicyBoundsExceptionLifetimes(t *testing.T) {
	p, err := ReadPolicy("release-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxExceptionLifetime != DefaultMaxExceptionLifetime {
		t.Fatalf("maxExceptionLifetime %d, want %d", p.MaxExceptionLifetime, DefaultMaxExceptionLifetime)
	}
}

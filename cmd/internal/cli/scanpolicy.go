package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/release/scancheck"
)

// ScanPolicyHelp explains the scan check in --help of every command that
// takes a release.
const ScanPolicyHelp = `
The scan is checked where the release enters. The lock's signed scan record
is judged today, not as it stood when the release was cut:
  - an exception the release relied on that has expired since refuses it
    (exit 3, naming the vulnerability, package and expiry), unless you
    accept it with --accept-expired-exception ID (recorded as a warning);
  - a scan database older than --max-scan-age refuses it (exit 3) when you
    give the flag; without it, one older than 30 days is only a warning;
  - --fail-on-severity HIGH,CRITICAL refuses a release whose record counts
    any finding of those severities, excepted or not (your own threshold).`

// ScanPolicyFlags are the consumer scan policy's flags, shared by both CLIs.
type ScanPolicyFlags struct {
	maxAge, failOn string
	acceptExpired  []string
	cmd            *cobra.Command
}

// Register adds --max-scan-age, --fail-on-severity and
// --accept-expired-exception to c.
func (f *ScanPolicyFlags) Register(c *cobra.Command) {
	fs := c.Flags()
	f.cmd = c
	fs.StringVar(&f.maxAge, "max-scan-age", "30d", "refuse a release whose scan database is older than this (30d, 72h); when not given, an older one is only a warning")
	fs.StringArrayVar(&f.acceptExpired, "accept-expired-exception", nil, "run a release whose exception for this vulnerability (ID) has expired since it was cut; recorded as a warning (repeatable)")
	fs.StringVar(&f.failOn, "fail-on-severity", "", "refuse a release whose signed scan record counts any finding of these severities, e.g. HIGH,CRITICAL")
}

// Policy is the scan policy the flags ask for, checked at now (zero: the
// wall clock).
func (f *ScanPolicyFlags) Policy(now time.Time) (*scancheck.Policy, error) {
	age, err := scancheck.ParseAge(f.maxAge)
	if err != nil {
		return nil, Usage(fmt.Errorf("--max-scan-age: %w", err))
	}
	sev, err := scancheck.ParseSeverities(f.failOn)
	if err != nil {
		return nil, Usage(fmt.Errorf("--fail-on-severity: %w", err))
	}
	explicit := false
	if fl := f.cmd.Flag("max-scan-age"); fl != nil {
		explicit = fl.Changed
	}
	return &scancheck.Policy{MaxAge: age, EnforceMaxAge: explicit, FailOn: sev, Now: now, AcceptExpired: f.acceptExpired}, nil
}

// WriteScanWarnings prints the check's warnings for people.
func WriteScanWarnings(w io.Writer, r *scancheck.Result) {
	if r == nil {
		return
	}
	for _, s := range r.Warnings {
		fmt.Fprintf(w, "warning: scan: %s\n", s)
	}
}

// Package scancheck holds the consumer's scan policy: what the user of a
// release requires of the vulnerability scan its signed lock records, judged
// where the release enters (reloader-mirror) or is checked
// (reloader-release verify). The release gate decided once, when the release
// was cut; this decides again, today: the database the scan used must not be
// too old, no exception the release relied on may have expired since (nor,
// so, the VEX statement the release attests from it: vexexpiry.go), and the
// recorded findings must pass the consumer's own severity threshold.
//
// It reads only the signed lock, so it needs no network, no scanner and no
// database: it is what an air-gapped side can always check.
package scancheck

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reloader-dev/reloader/release"

	"github.com/reloader-dev/reloader/internal/exitcode"
)

// DefaultMaxAge is the database age past which a scan is reported as stale
// when the user did not choose a limit.
const DefaultMaxAge = 30 * 24 * time.Hour

// Severities are the severities a scan record counts, highest first.
var Severities = []string{"CRITICAL", "HIGH", "MEDIUM", "LOW", "UNKNOWN"}

// ErrRefused: the scan record does not meet the consumer's policy. It is a
// refusal (exit 3), like an untrusted signature.
var ErrRefused = exitcode.New(exitcode.Refused, "the release's scan does not meet the scan policy")

// Policy is what the consumer requires of a release's signed scan record.
// The zero value checks exception expiry and warns about a database older
// than DefaultMaxAge.
type Policy struct {
	// MaxAge bounds the age of the scan's database (its build time against
	// Now); zero means DefaultMaxAge.
	MaxAge time.Duration
	// EnforceMaxAge refuses a release whose database is older than MaxAge
	// (or unrecorded); without it that is a warning. Set it when the user
	// chose the limit: a default they never saw must not block them.
	EnforceMaxAge bool
	// FailOn lists severities of which the record must count no finding,
	// excepted or not: the consumer's threshold, which may be stricter than
	// the release policy's.
	FailOn []string
	// AcceptExpired are vulnerabilities whose expired exception the
	// consumer accepts anyway (--accept-expired-exception): a warning on
	// record instead of a refusal; the statement is still reported expired.
	AcceptExpired []string
	// Now is the time of the check (zero: the wall clock). Tests and
	// audits of "would this have passed on date X" set it.
	Now time.Time
}

// ParseSeverities reads a --fail-on-severity value: comma-separated
// severities, any case, e.g. "HIGH,CRITICAL".
func ParseSeverities(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.ToUpper(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		if !slices.Contains(Severities, f) {
			return nil, fmt.Errorf("severity %q: want some of %s", f, strings.Join(Severities, ","))
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, nil
}

// Result is the verdict, reported by `verify -o json`.
type Result struct {
	// Checked is false for a release that records no scan (allowed with
	// --allow-unscanned): there was nothing to check.
	Checked bool `json:"checked"`
	Passed  bool `json:"passed"`
	// DBBuilt is the build time of the scan's database, DBAge its age at
	// Now in whole hours, MaxAge the limit applied.
	DBBuilt  time.Time `json:"dbBuilt,omitzero"`
	DBAge    string    `json:"dbAge,omitempty"`
	MaxAge   string    `json:"maxAge"`
	Enforced bool      `json:"maxAgeEnforced"`
	// Refusals say why the release is refused, Warnings what the user
	// should know but does not block.
	Refusals []string `json:"refusals,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// ExpiredStatements are the release's VEX statements past their date
	// (each also a refusal).
	ExpiredStatements []ExpiredStatement `json:"expiredStatements,omitempty"`
}

// RefusedError carries the result of a refused check, so a command can
// still report it in full.
type RefusedError struct {
	Version string
	Result  Result
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("release %s: %v: %s", e.Version, ErrRefused, strings.Join(e.Result.Refusals, "; "))
}

// Unwrap makes errors.Is(err, ErrRefused) hold.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// Check judges the lock's scan record. The error is a *RefusedError when
// the policy refuses the release.
func (p Policy) Check(l *release.Lock) (Result, error) {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	maxAge := p.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	res := Result{Passed: true, MaxAge: formatAge(maxAge), Enforced: p.EnforceMaxAge}
	if !l.Scanned() {
		// Accepted by --allow-unscanned (trust refuses it otherwise);
		// Checked false says there was nothing to judge.
		if p.EnforceMaxAge || len(p.FailOn) > 0 {
			res.Refusals = append(res.Refusals, "the release records no vulnerability scan, so --max-scan-age and --fail-on-severity cannot hold")
		}
		return p.verdict(l, res)
	}
	res.Checked = true
	sc := l.Scan
	age := func(msg string) {
		if p.EnforceMaxAge {
			// The limit is the user's own: name it, since a longer one,
			// or a release scanned since, is the way through.
			res.Refusals = append(res.Refusals, msg+" (--max-scan-age)")
		} else {
			res.Warnings = append(res.Warnings, msg+" (a warning: give --max-scan-age to refuse it)")
		}
	}
	switch {
	case sc.DBBuilt.IsZero():
		age("the scan records no database build time, so its age is unknown")
	default:
		res.DBBuilt = sc.DBBuilt.UTC()
		a := now.Sub(sc.DBBuilt)
		res.DBAge = formatAge(a)
		if a > maxAge {
			age(fmt.Sprintf("the scan's vulnerability database was built %s, %s before now, older than the %s allowed",
				sc.DBBuilt.UTC().Format(time.RFC3339), formatAge(a), formatAge(maxAge)))
		}
	}
	expired, refusals, warnings := expiredStatements(l, now, p.AcceptExpired)
	res.ExpiredStatements, res.Refusals, res.Warnings = expired, append(res.Refusals, refusals...), append(res.Warnings, warnings...)
	for _, sev := range p.FailOn {
		if n := sc.Counts[sev]; n > 0 {
			res.Refusals = append(res.Refusals, fmt.Sprintf("the scan counts %d %s finding(s) (--fail-on-severity %s)%s", n, sev, strings.Join(p.FailOn, ","), excepted(sc)))
		}
	}
	return p.verdict(l, res)
}

func (p Policy) verdict(l *release.Lock, res Result) (Result, error) {
	if len(res.Refusals) > 0 {
		res.Passed = false
		return res, &RefusedError{Version: l.Version, Result: res}
	}
	return res, nil
}

// excepted names the exceptions the release applied, so a refusal on counts
// says which findings the release itself accepted.
func excepted(sc *release.Scan) string {
	if len(sc.Exceptions) == 0 {
		return ""
	}
	ids := make([]string, 0, len(sc.Exceptions))
	for _, e := range sc.Exceptions {
		ids = append(ids, e.ID)
	}
	return "; the release accepted " + strings.Join(ids, ", ") + " by exception"
}

// formatAge writes a duration in days and hours, as people read database
// ages.
func formatAge(d time.Duration) string {
	if d < 0 {
		return "-" + formatAge(-d)
	}
	h := int64(d / time.Hour)
	if h < 24 {
		return fmt.Sprintf("%dh", h)
	}
	return fmt.Sprintf("%dd%dh", h/24, h%24)
}

// ParseAge reads a --max-scan-age value: a Go duration ("72h") or whole
// days ("30d").
func ParseAge(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(strings.TrimSpace(s), "d"); ok {
		var n int
		if _, err := fmt.Sscanf(d, "%d", &n); err != nil || n <= 0 || n > 36500 || fmt.Sprint(n) != d {
			return 0, fmt.Errorf("age %q: want a positive number of days (30d) or a duration (72h)", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("age %q: want a positive number of days (30d) or a duration (72h)", s)
	}
	return v, nil
}

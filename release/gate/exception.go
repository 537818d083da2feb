package gate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultMaxExceptionLifetime is how long an exception may last, from its
// approval to its expiry, when the policy does not say.
const DefaultMaxExceptionLifetime Days = 90

// maxMaxExceptionLifetime caps what a policy may allow, so that raising
// the maximum cannot make exceptions open-ended again.
const maxMaxExceptionLifetime Days = 365

// Days is a number of whole days, written "90d" in a policy file: the dates
// an exception carries are whole days.
type Days int

// UnmarshalJSON reads "<n>d".
func (d *Days) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a lifetime must be a string such as \"90d\": %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(s, "d"))
	if !strings.HasSuffix(s, "d") || err != nil || n <= 0 || strconv.Itoa(n)+"d" != s {
		return fmt.Errorf("lifetime %q is not a whole number of days such as \"90d\"", s)
	}
	*d = Days(n)
	return nil
}

// MarshalJSON writes "<n>d".
func (d Days) MarshalJSON() ([]byte, error) { return json.Marshal(strconv.Itoa(int(d)) + "d") }

// maxLifetime is the policy's maximum exception lifetime.
func (p *Policy) maxLifetime() Days {
	if p.MaxExceptionLifetime == 0 {
		return DefaultMaxExceptionLifetime
	}
	return p.MaxExceptionLifetime
}

// checkLifetime validates the policy's maximum exception lifetime.
func (p *Policy) checkLifetime() error {
	if p.MaxExceptionLifetime > maxMaxExceptionLifetime {
		return fmt.Errorf("maxExceptionLifetime %dd is more than the %dd any policy may allow", p.MaxExceptionLifetime, maxMaxExceptionLifetime)
	}
	return nil
}

// checkApproval says what is wrong with who approved an exception and for
// how long: someone must be named, on a date, and the exception may last at
// most max from that date, so every exception is looked at again.
func (e Exception) checkApproval(where string, max Days) []error {
	var errs []error
	if strings.TrimSpace(e.ApprovedBy) == "" {
		errs = append(errs, fmt.Errorf("%s: no approvedBy (who accepted the risk, e.g. a name and email)", where))
	}
	if e.ApprovedOn.IsZero() {
		errs = append(errs, fmt.Errorf("%s: no approvedOn date (YYYY-MM-DD)", where))
		return errs
	}
	if e.Expires.IsZero() {
		return errs
	}
	if !e.ApprovedOn.Before(e.Expires.Time) {
		errs = append(errs, fmt.Errorf("%s: approvedOn %s is not before expires %s", where, e.ApprovedOn.Format(time.DateOnly), e.Expires.Format(time.DateOnly)))
		return errs
	}
	if limit := e.ApprovedOn.AddDate(0, 0, int(max)); e.Expires.After(limit) {
		errs = append(errs, fmt.Errorf("%s: lasts %d days from approvedOn %s to expires %s, more than the maxExceptionLifetime of %dd (expire it by %s)",
			where, int(e.Expires.Sub(e.ApprovedOn.Time).Hours()/24), e.ApprovedOn.Format(time.DateOnly), e.Expires.Format(time.DateOnly), max, limit.Format(time.DateOnly)))
	}
	return errs
}

// premature tells whether the exception is approved on a date after now
// (approvals are dated to the day, from 00:00 UTC).
func (e Exception) premature(now time.Time) bool {
	return !e.ApprovedOn.IsZero() && now.Before(e.ApprovedOn.Time)
}

package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/reloader-dev/reloader/internal/strict"
)

// PolicyAPIVersion identifies the policy file format.
const PolicyAPIVersion = "reloader.dev/release-policy/v1"

// maxPolicyBytes bounds the policy file; it is edited by people.
const maxPolicyBytes = 1 << 20

// minJustification is short enough for a real sentence and long enough to
// refuse "n/a" or "false positive" without saying why.
const minJustification = 20

// vulnIDPattern is what an exception may name: a CVE, GHSA or Go
// vulnerability id, never a wildcard.
const vulnIDPattern = `^(CVE-[0-9]{4}-[0-9]{4,}|GHSA(-[23456789cfghjmpqrvwx]{4}){3}|GO-[0-9]{4}-[0-9]{4,})$`

// Policy is the release policy file.
type Policy struct {
	APIVersion string `json:"apiVersion"`
	// FailOn lists the severities that fail the release, fixed or not. It
	// must contain HIGH and CRITICAL; it may add MEDIUM or lower.
	FailOn []Severity `json:"failOn"`
	// Exceptions accept one vulnerability in one package until a date.
	Exceptions []Exception `json:"exceptions,omitempty"`
	// MaxExceptionLifetime bounds every exception from its approval to its
	// expiry ("90d" by default, at most "365d").
	MaxExceptionLifetime Days `json:"maxExceptionLifetime,omitempty"`
	// AllowUnknown lets findings of UNKNOWN severity pass. By default they
	// block: a fresh CVE is UNKNOWN until it is scored, and "not scored yet"
	// is not "harmless". See unknown.go.
	AllowUnknown bool `json:"allowUnknown,omitempty"`
}

// Exception accepts a finding that would otherwise fail the release.
type Exception struct {
	// ID is the vulnerability id exactly as Trivy reports it.
	ID string `json:"id"`
	// Package is Trivy's PkgName of the affected package.
	Package string `json:"package"`
	// Kind says what the exception claims (see exceptionkind.go):
	// accepted_risk (the default when absent) or not_affected, which
	// needs VEXJustification.
	Kind ExceptionKind `json:"kind,omitempty"`
	// VEXJustification is the OpenVEX justification of a not_affected
	// exception, one of VEXJustifications.
	VEXJustification string `json:"vexJustification,omitempty"`
	// Justification says why shipping is acceptable (unreachable code,
	// mitigated by configuration, ...); it is printed with the result.
	Justification string `json:"justification"`
	// Expires is a date (YYYY-MM-DD). The exception holds before 00:00 UTC
	// of that day; from then on it fails the release until removed or
	// renewed, so nobody forgets it.
	Expires Date `json:"expires"`
	// ApprovedBy names who accepted the risk; ApprovedOn is when. The
	// exception may last at most the policy's MaxExceptionLifetime from
	// ApprovedOn to Expires.
	ApprovedBy string `json:"approvedBy"`
	ApprovedOn Date   `json:"approvedOn"`
}

// Date is a calendar date in a policy file.
type Date struct{ time.Time }

// UnmarshalJSON reads "YYYY-MM-DD".
func (d *Date) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("date must be a string YYYY-MM-DD: %w", err)
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return fmt.Errorf("date %q is not YYYY-MM-DD", s)
	}
	d.Time = t
	return nil
}

// MarshalJSON writes "YYYY-MM-DD".
func (d Date) MarshalJSON() ([]byte, error) { return json.Marshal(d.Format(time.DateOnly)) }

// Expired reports whether the exception no longer holds at now.
func (e Exception) Expired(now time.Time) bool { return !now.Before(e.Expires.Time) }

// ReadPolicy reads and parses the policy file at path.
func ReadPolicy(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading release policy: %w", err)
	}
	p, err := ParsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("release policy %s: %w", path, err)
	}
	return p, nil
}

// ParsePolicy decodes a policy file (YAML or JSON) strictly: an unknown or
// misspelt field is an error, since a misspelt "expires" would otherwise
// make an exception last forever.
func ParsePolicy(data []byte) (*Policy, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("policy is empty")
	}
	var p Policy
	if err := strict.YAML(data, "policy", maxPolicyBytes, &p); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Validate checks the policy's invariants. Expiry is not checked here: an
// expired exception is a valid file and a failed release (see Evaluate).
func (p *Policy) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if p.APIVersion != PolicyAPIVersion {
		bad("apiVersion is %q, want %q", p.APIVersion, PolicyAPIVersion)
	}
	set := map[Severity]bool{}
	for _, s := range p.FailOn {
		if !s.valid() {
			bad("failOn: unknown severity %q", s)
		}
		set[s] = true
	}
	// No policy may stop failing on these.
	for _, s := range []Severity{SeverityHigh, SeverityCritical} {
		if !set[s] {
			bad("failOn must include %s", s)
		}
	}
	if err := p.checkLifetime(); err != nil {
		errs = append(errs, err)
	}
	vulnID := regexp.MustCompile(vulnIDPattern)
	seen := map[string]bool{}
	for i, e := range p.Exceptions {
		where := fmt.Sprintf("exception %d (%s in %s)", i, e.ID, e.Package)
		if !vulnID.MatchString(e.ID) {
			bad("%s: id %q is not a CVE, GHSA or GO vulnerability id", where, e.ID)
		}
		if strings.TrimSpace(e.Package) == "" {
			bad("%s: no package", where)
		}
		if len(strings.TrimSpace(e.Justification)) < minJustification {
			bad("%s: justification must explain in at least %d characters why shipping is acceptable", where, minJustification)
		}
		if e.Expires.IsZero() {
			bad("%s: no expiry date", where)
		}
		errs = append(errs, e.checkApproval(where, p.maxLifetime())...)
		if err := e.validateKind(); err != nil {
			bad("%s: %v", where, err)
		}
		k := e.ID + "|" + e.Package
		if seen[k] {
			bad("%s: listed twice", where)
		}
		seen[k] = true
	}
	if err := p.validateUnknown(); err != nil {
		bad("%v", err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid release policy: %w", errors.Join(errs...))
	}
	return nil
}

func (p *Policy) failsOn(s Severity) bool {
	if s == SeverityUnknown {
		return p.unknownBlocks()
	}
	for _, f := range p.FailOn {
		if f == s {
			return true
		}
	}
	return false
}

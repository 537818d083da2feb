// Package support holds what the versions page says about support: which
// release series are supported until when (release/support.yaml), and the
// security advisories that affect them (release/advisories/*.json, one OSV
// document per advisory).
package support

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/reloader-dev/reloader/internal/strict"

	"golang.org/x/mod/semver"

	"github.com/reloader-dev/reloader/release/gate"
)

// APIVersion identifies the support file format.
const APIVersion = "reloader.dev/support/v1"

const maxFileBytes = 1 << 20

// Table is the support file: the release series and their end of support.
type Table struct {
	APIVersion string   `json:"apiVersion"`
	Series     []Series `json:"series"`
}

// Series is one minor release series ("v1.4" covers v1.4.0, v1.4.1, …).
type Series struct {
	Series string `json:"series"`
	// Dates are YYYY-MM-DD, as in the release policy.
	Released     gate.Date `json:"released"`
	EndOfSupport gate.Date `json:"endOfSupport"`
}

// Supported reports whether the series is still supported at now: support
// ends at 00:00 UTC of its end date.
func (s Series) Supported(now time.Time) bool { return now.Before(s.EndOfSupport.Time) }

// Contains reports whether version (v1.4.2) belongs to the series (v1.4).
func (s Series) Contains(version string) bool {
	return semver.IsValid(version) && semver.Canonical(version) == version && semver.MajorMinor(version) == s.Series
}

// ReadTable reads and parses the support file at path.
func ReadTable(path string) (*Table, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the support table: %w", err)
	}
	t, err := ParseTable(data)
	if err != nil {
		return nil, fmt.Errorf("support table %s: %w", path, err)
	}
	return t, nil
}

// ParseTable decodes a support file strictly: every series is a distinct
// vMAJOR.MINOR released before its support ends. The series come back
// newest first.
func ParseTable(data []byte) (*Table, error) {
	var t Table
	if err := strict.YAML(data, "support table", maxFileBytes, &t); err != nil {
		return nil, err
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	sort.SliceStable(t.Series, func(i, j int) bool { return semver.Compare(t.Series[i].Series, t.Series[j].Series) > 0 })
	return &t, nil
}

// Check holds a table to the rules ParseTable applies, for a table that
// arrived inside another document (the release lock).
func (t *Table) Check() error {
	var errs []error
	if t.APIVersion != APIVersion {
		errs = append(errs, fmt.Errorf("apiVersion is %q, want %q", t.APIVersion, APIVersion))
	}
	if len(t.Series) == 0 {
		errs = append(errs, errors.New("lists no release series"))
	}
	seen := map[string]bool{}
	for i, s := range t.Series {
		switch {
		case !semver.IsValid(s.Series) || semver.MajorMinor(s.Series) != s.Series:
			errs = append(errs, fmt.Errorf("series %d: %q is not vMAJOR.MINOR", i, s.Series))
		case seen[s.Series]:
			errs = append(errs, fmt.Errorf("series %s is listed twice", s.Series))
		}
		seen[s.Series] = true
		if s.Released.IsZero() || s.EndOfSupport.IsZero() {
			errs = append(errs, fmt.Errorf("series %s: released and endOfSupport are both required", s.Series))
		} else if !s.Released.Before(s.EndOfSupport.Time) {
			errs = append(errs, fmt.Errorf("series %s: support ends %s, not after its release %s", s.Series,
				s.EndOfSupport.Format(time.DateOnly), s.Released.Format(time.DateOnly)))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid support table: %w", errors.Join(errs...))
	}
	return nil
}

// SeriesOf returns the series version (v1.4.2) belongs to, if listed.
func (t *Table) SeriesOf(version string) (Series, bool) {
	for _, s := range t.Series {
		if s.Contains(version) {
			return s, true
		}
	}
	return Series{}, false
}

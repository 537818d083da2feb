package mirror

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/semver"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/release/support"
)

// AdvisorySource is what a release is judged against: the advisories and
// support table of a signed lock (usually a newer release's), or of a
// directory the user vouches for.
type AdvisorySource struct {
	// Name says where they came from.
	Name string `json:"name"`
	// Release is the version whose signed lock carried them; empty for a
	// directory.
	Release string `json:"release,omitempty"`
	// Verified is true when they came from a lock whose signature was
	// checked against the trust policy; a directory is trusted as given.
	Verified bool `json:"verified"`

	Advisories []*support.Advisory `json:"-"`
	Support    *support.Table      `json:"-"`
}

// AdvisoriesFromLock takes the advisories and support table a verified
// lock carries. A v1 lock carries neither, and so clears every release.
func AdvisoriesFromLock(name string, l *release.Lock) (*AdvisorySource, error) {
	as, err := l.ParsedAdvisories()
	if err != nil {
		return nil, fmt.Errorf("advisories of release %s (%s): %w", l.Version, name, err)
	}
	return &AdvisorySource{Name: name, Release: l.Version, Verified: true, Advisories: as, Support: l.Support}, nil
}

// AdvisoriesFromDir reads a directory laid out as release/advisories is
// (one <ID>.json OSV document each), with an optional support.yaml. Nothing
// signs it: the user's choice of directory is the trust.
func AdvisoriesFromDir(dir string) (*AdvisorySource, error) {
	as, tab, err := support.ReadSupportDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--advisories %s: %w", dir, err)
	}
	return &AdvisorySource{Name: dir + " (a directory, trusted as given)", Advisories: as, Support: tab}, nil
}

// StandingOptions are the user's exceptions to the advisory and support rules.
type StandingOptions struct {
	// Now judges end of support.
	Now time.Time
	// Accept lists advisories (by ID or alias) the user runs the release
	// despite.
	Accept []string
	// AllowUnsupported accepts a release whose series' support has ended,
	// or whose series no support table known lists (--accept-unsupported).
	AllowUnsupported bool
	// Tables are the support tables known besides the source's: the
	// release's own signed lock's, and those of other releases the command
	// was given. The source is usually a newer lock, whose table may have
	// moved the series' end or dropped it; each table is as signed, so Judge
	// holds the release to the strictest entry of them all.
	Tables []NamedTable
}

// NamedTable is a support table and where it came from.
type NamedTable struct {
	Name  string
	Table *support.Table
}

// Standing is what an advisory source says about one release.
type Standing struct {
	Version string          `json:"version"`
	Source  *AdvisorySource `json:"source"`
	// Advisories are those that mark the version affected; withdrawn
	// advisories affect nothing and are not listed.
	Advisories []AdvisoryFinding `json:"advisories"`
	// Series is the version's series; EndOfSupport is the end of its row
	// in the table that decided (none for an unlisted series).
	Series       string `json:"series,omitempty"`
	EndOfSupport string `json:"endOfSupport,omitempty"`
	// Support is "supported", "ended", "unlisted" (no table known lists the
	// series) or "unknown" (no table is known: v1 locks).
	Support string `json:"support"`
	// SupportFrom names the table that decided Support: of the tables
	// known, the one whose entry ends the series first; for an unlisted
	// series, every table consulted.
	SupportFrom string `json:"supportFrom,omitempty"`
	// UnsupportedAllowed records --accept-unsupported for an ended or
	// unlisted series: admitted, with this warning on record.
	UnsupportedAllowed bool `json:"unsupportedAllowed,omitempty"`
	// Refused gives every reason the release is refused; empty: admitted.
	Refused []string `json:"refused,omitempty"`
}

// AdvisoryFinding is one advisory that marks the release affected.
type AdvisoryFinding struct {
	ID       string `json:"id"`
	Summary  string `json:"summary,omitempty"`
	Accepted bool   `json:"accepted"`
}

// Judge decides whether version may be used, by src's advisories, the
// strictest entry of the support tables known (src's and o.Tables), and the
// user's exceptions. It is pure: the caller fetched and verified them all.
func Judge(src *AdvisorySource, version string, o StandingOptions) *Standing {
	st := &Standing{Version: version, Source: src, Advisories: []AdvisoryFinding{}, Support: "unknown"}
	for _, a := range src.Advisories {
		if !a.Affects(version) {
			continue
		}
		f := AdvisoryFinding{ID: a.ID, Summary: a.Summary, Accepted: accepted(a, o.Accept)}
		st.Advisories = append(st.Advisories, f)
		if !f.Accepted {
			st.Refused = append(st.Refused, fmt.Sprintf("advisory %s marks %s affected (%s); --accept-advisory %s to run it anyway",
				a.ID, version, oneLine(a.Summary), a.ID))
		}
	}
	judgeSupport(st, src, version, o)
	return st
}

// judgeSupport applies the strictest support entry known for version's
// series: of every table known, the row that ends support first (on a tie,
// the first named, the source's). A table that lacks the series has no
// entry for it and defers to one that lists it: a newer table drops series
// long ended, which the older tables still end. A series no table lists is
// refused, as an ended one is, unless --accept-unsupported: the tables are
// the project's word on what it supports, and silence is no promise. With
// no table at all (v1 locks) there is nothing to judge by, and the release
// stays "unknown" and admitted, as before tables were signed.
func judgeSupport(st *Standing, src *AdvisorySource, version string, o StandingOptions) {
	var tables []NamedTable
	if src.Support != nil {
		tables = append(tables, NamedTable{src.Name, src.Support})
	}
	for _, t := range o.Tables {
		if t.Table != nil && !slices.ContainsFunc(tables, func(k NamedTable) bool { return k.Table == t.Table }) {
			tables = append(tables, t)
		}
	}
	if len(tables) == 0 {
		return
	}
	var (
		row   support.Series
		from  string
		found bool
	)
	for _, t := range tables {
		if s, ok := t.Table.SeriesOf(version); ok && (!found || s.EndOfSupport.Before(row.EndOfSupport.Time)) {
			row, from, found = s, t.Name, true
		}
	}
	if !found {
		names := make([]string, len(tables))
		for i, t := range tables {
			names[i] = t.Name
		}
		st.Support, st.Series, st.SupportFrom = "unlisted", semver.MajorMinor(version), strings.Join(names, " and ")
		st.UnsupportedAllowed = o.AllowUnsupported
		if !o.AllowUnsupported {
			st.Refused = append(st.Refused, fmt.Sprintf("series %s of %s is unlisted: no support table known (%s) has a row for it, so nothing says it is supported; --accept-unsupported to run it anyway",
				st.Series, version, st.SupportFrom))
		}
		return
	}
	st.Series, st.EndOfSupport, st.SupportFrom = row.Series, row.EndOfSupport.Format(time.DateOnly), from
	if row.Supported(o.Now) {
		st.Support = "supported"
		return
	}
	st.Support, st.UnsupportedAllowed = "ended", o.AllowUnsupported
	if !o.AllowUnsupported {
		st.Refused = append(st.Refused, fmt.Sprintf("series %s of %s is past its end of support (%s, by the support table of %s); --accept-unsupported to run it anyway",
			row.Series, version, st.EndOfSupport, from))
	}
}

func accepted(a *support.Advisory, ids []string) bool {
	return slices.Contains(ids, a.ID) || slices.ContainsFunc(a.Aliases, func(al string) bool { return slices.Contains(ids, al) })
}

func oneLine(s string) string {
	if s == "" {
		return "no summary"
	}
	return strings.Join(strings.Fields(s), " ")
}

// Err is the refusal, as gate.ErrRefused (exit 3), naming the release,
// each advisory and where the advisories came from; nil when admitted.
func (s *Standing) Err() error {
	if len(s.Refused) == 0 {
		return nil
	}
	return fmt.Errorf("%w: release %s, by the advisories of %s: %s", gate.ErrRefused, s.Version, s.Source.Name,
		errors.Join(stringErrors(s.Refused)...))
}

func stringErrors(ss []string) []error {
	out := make([]error, len(ss))
	for i, s := range ss {
		out[i] = errors.New(s)
	}
	return out
}

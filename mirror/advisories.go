package mirror

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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
	// AllowUnsupported accepts a release whose series' support has ended.
	AllowUnsupported bool
}

// Standing is what an advisory source says about one release.
type Standing struct {
	Version string          `json:"version"`
	Source  *AdvisorySource `json:"source"`
	// Advisories are those that mark the version affected; withdrawn
	// advisories affect nothing and are not listed.
	Advisories []AdvisoryFinding `json:"advisories"`
	// Series and EndOfSupport are the version's row of the support table.
	Series       string `json:"series,omitempty"`
	EndOfSupport string `json:"endOfSupport,omitempty"`
	// Support is "supported", "ended", "unlisted" (the table has no row
	// for the series) or "unknown" (the source has no table).
	Support string `json:"support"`
	// UnsupportedAllowed records --allow-unsupported for an ended series.
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

// Judge decides whether version may be used, by src's advisories and
// support table and the user's exceptions. It is pure: the caller fetched
// and verified the source.
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
	if src.Support != nil {
		s, ok := src.Support.SeriesOf(version)
		switch {
		case !ok:
			st.Support = "unlisted"
		case s.Supported(o.Now):
			st.Support, st.Series, st.EndOfSupport = "supported", s.Series, s.EndOfSupport.Format(time.DateOnly)
		default:
			st.Support, st.Series, st.EndOfSupport = "ended", s.Series, s.EndOfSupport.Format(time.DateOnly)
			st.UnsupportedAllowed = o.AllowUnsupported
			if !o.AllowUnsupported {
				st.Refused = append(st.Refused, fmt.Sprintf("series %s of %s is past its end of support (%s); --allow-unsupported to run it anyway",
					s.Series, version, st.EndOfSupport))
			}
		}
	}
	return st
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

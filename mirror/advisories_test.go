package mirror

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/release/support"
)

// TestJudgeHoldsAReleaseToTheStrictestSupportEntryKnown is the support rule:
// of the tables known (the source's, usually the newest lock's, and the
// release's own), the row that ends the series first decides; a series no
// table lists is refused unless --accept-unsupported, which admits it with
// the warning on record; with no table at all there is nothing to judge by.
func TestJudgeHoldsAReleaseToTheStrictestSupportEntryKnown(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	day := func(d int) gate.Date { return gate.Date{Time: now.AddDate(0, 0, d).Truncate(24 * time.Hour)} }
	date := func(d int) string { return day(d).Format(time.DateOnly) }
	table := func(rows ...support.Series) *support.Table {
		return &support.Table{APIVersion: support.APIVersion, Series: rows}
	}
	row := func(series string, end int) support.Series {
		return support.Series{Series: series, Released: day(-500), EndOfSupport: day(end)}
	}
	const newest = "release v1.4.0 at registry.example/reloader-release:v1.4.0"
	const own = "release v1.2.3 (its own lock)"
	for _, tc := range []struct {
		name             string
		newest, own      *support.Table
		allow            bool
		support, from    string
		end              string
		refused, allowed bool
		refusalNaming    string
	}{
		{name: "listed and supported by both", newest: table(row("v1.2", 100)), own: table(row("v1.2", 100)),
			support: "supported", from: newest, end: date(100)},
		{name: "ended by the newest", newest: table(row("v1.2", -1)), own: table(row("v1.2", 100)),
			support: "ended", from: newest, end: date(-1), refused: true, refusalNaming: "past its end of support"},
		{name: "ended, accepted", newest: table(row("v1.2", -1)), own: table(row("v1.2", 100)), allow: true,
			support: "ended", from: newest, end: date(-1), allowed: true},
		{name: "own table stricter than the newest's: own wins", newest: table(row("v1.2", 100)), own: table(row("v1.2", -1)),
			support: "ended", from: own, end: date(-1), refused: true, refusalNaming: "by the support table of " + own},
		{name: "newest's stricter than own: newest wins", newest: table(row("v1.2", 50)), own: table(row("v1.2", 100)),
			support: "supported", from: newest, end: date(50)},
		{name: "listed only in its own table: judged by it", newest: table(row("v1.4", 300)), own: table(row("v1.2", 100)),
			support: "supported", from: own, end: date(100)},
		{name: "listed only in the newest: judged by it", newest: table(row("v1.2", -1)), own: table(row("v1.0", 300)),
			support: "ended", from: newest, end: date(-1), refused: true, refusalNaming: "past its end of support"},
		{name: "unlisted in both is refused", newest: table(row("v1.4", 300)), own: table(row("v1.0", 300)),
			support: "unlisted", from: newest + " and " + own, refused: true,
			refusalNaming: "series v1.2 of v1.2.3 is unlisted: no support table known (" + newest + " and " + own + ") has a row"},
		{name: "unlisted, accepted: a recorded warning", newest: table(row("v1.4", 300)), own: table(row("v1.0", 300)), allow: true,
			support: "unlisted", from: newest + " and " + own, allowed: true},
		{name: "unlisted in the only table is refused", newest: table(row("v1.4", 300)),
			support: "unlisted", from: newest, refused: true, refusalNaming: "--accept-unsupported"},
		{name: "no table at all (v1 locks): nothing to judge by, admitted", support: "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &AdvisorySource{Name: newest, Release: "v1.4.0", Verified: true, Support: tc.newest}
			st := Judge(src, "v1.2.3", StandingOptions{Now: now, AllowUnsupported: tc.allow, Tables: []NamedTable{{own, tc.own}}})
			if st.Support != tc.support || st.SupportFrom != tc.from || st.EndOfSupport != tc.end || st.UnsupportedAllowed != tc.allowed {
				t.Errorf("support %q from %q until %q, accepted %v; want %q from %q until %q, accepted %v",
					st.Support, st.SupportFrom, st.EndOfSupport, st.UnsupportedAllowed, tc.support, tc.from, tc.end, tc.allowed)
			}
			err := st.Err()
			if tc.refused != (err != nil) || (err != nil && (!errors.Is(err, gate.ErrRefused) || !strings.Contains(err.Error(), tc.refusalNaming) ||
				!strings.Contains(err.Error(), "release v1.2.3"))) {
				t.Errorf("refusal %v; want refused %v, as gate.ErrRefused naming the release and %q", err, tc.refused, tc.refusalNaming)
			}
		})
	}
}

// The release's own lock as the source is one table, not two: it is named
// once.
func TestJudgeNamesATableOnceWhenItIsAlsoTheSource(t *testing.T) {
	own := &support.Table{APIVersion: support.APIVersion, Series: []support.Series{{Series: "v1.0"}}}
	src := &AdvisorySource{Name: "release v1.2.3 (its own lock)", Release: "v1.2.3", Verified: true, Support: own}
	st := Judge(src, "v1.2.3", StandingOptions{Now: time.Now(), Tables: []NamedTable{{src.Name, own}}})
	if st.Support != "unlisted" || st.SupportFrom != src.Name || st.Series != "v1.2" || st.Err() == nil {
		t.Errorf("support %q from %q, series %q, refusal %v; want unlisted from %q, series v1.2, refused", st.Support, st.SupportFrom, st.Series, st.Err(), src.Name)
	}
}

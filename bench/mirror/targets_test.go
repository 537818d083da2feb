package mirror_test

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// figures are the medians of one size at one round trip that the targets
// judge; zero is "not measured in this benchmark".
type figures struct {
	Mirror, MirrorNoop, Crane time.Duration
	// Careful, CarefulNoop: the careful user's pipeline (copy benchmark).
	Careful, CarefulNoop time.Duration
	// SHA256Sum: coreutils' check of the archive (import benchmark).
	SHA256Sum time.Duration
}

// The targets (#53): the mirror is judged against what a careful user
// runs, the import's no-op against the checksum it must make.
const (
	overCareful   = 3.0 // careful pipeline / mirror, copy and no-op
	overCrane     = 1.3 // crane.Copy / mirror copy
	noopOverFloor = 1.2 // import no-op / sha256sum -c
)

// misses names every target the figures miss. imported says they are the
// import benchmark's (mirror = import, crane = crane push), whose only
// target is the no-op against sha256sum.
func (f figures) misses(imported bool) []string {
	var out []string
	x := func(a, b time.Duration) float64 { return a.Seconds() / b.Seconds() }
	if imported {
		if f.SHA256Sum > 0 && x(f.MirrorNoop, f.SHA256Sum) > noopOverFloor {
			out = append(out, fmt.Sprintf("import no-op %.2fx sha256sum's (at most %.1fx)", x(f.MirrorNoop, f.SHA256Sum), noopOverFloor))
		}
		return out
	}
	if x(f.Crane, f.Mirror) < overCrane {
		out = append(out, fmt.Sprintf("copy %.2fx faster than crane.Copy (at least %.1fx)", x(f.Crane, f.Mirror), overCrane))
	}
	if f.Careful > 0 && x(f.Careful, f.Mirror) < overCareful {
		out = append(out, fmt.Sprintf("copy %.2fx faster than the careful user's pipeline (at least %.0fx)", x(f.Careful, f.Mirror), overCareful))
	}
	if f.CarefulNoop > 0 && x(f.CarefulNoop, f.MirrorNoop) < overCareful {
		out = append(out, fmt.Sprintf("no-op %.2fx faster than the careful user's pipeline (at least %.0fx)", x(f.CarefulNoop, f.MirrorNoop), overCareful))
	}
	return out
}

func TestMirrorTargetsAreCheckedAndNamedWhenMissed(t *testing.T) {
	s := time.Second
	meets := figures{Mirror: s, MirrorNoop: s / 10, Crane: 14 * s / 10, Careful: 31 * s / 10, CarefulNoop: 4 * s / 10}
	if m := meets.misses(false); len(m) != 0 {
		t.Errorf("figures meeting every target missed %v", m)
	}
	for _, tc := range []struct {
		name string
		f    func(*figures)
		want string
	}{
		{"crane", func(f *figures) { f.Crane = 12 * s / 10 }, "copy 1.20x faster than crane.Copy (at least 1.3x)"},
		{"careful copy", func(f *figures) { f.Careful = 29 * s / 10 }, "copy 2.90x faster than the careful user's pipeline (at least 3x)"},
		{"careful no-op", func(f *figures) { f.CarefulNoop = 2 * s / 10 }, "no-op 2.00x faster than the careful user's pipeline (at least 3x)"},
	} {
		f := meets
		tc.f(&f)
		if got := f.misses(false); !slices.Equal(got, []string{tc.want}) {
			t.Errorf("%s: missed %q, want %q", tc.name, got, tc.want)
		}
	}
	// The copy benchmark's targets do not apply to the import's figures.
	imp := figures{Mirror: s, MirrorNoop: 12 * s / 10, Crane: 2 * s, SHA256Sum: s}
	if m := imp.misses(true); len(m) != 0 {
		t.Errorf("import no-op at 1.2x sha256sum's missed %v", m)
	}
	imp.MirrorNoop = 13 * s / 10
	if got := imp.misses(true); !slices.Equal(got, []string{"import no-op 1.30x sha256sum's (at most 1.2x)"}) {
		t.Errorf("import no-op at 1.3x sha256sum's: missed %q", got)
	}
}

package mirror

import (
	"errors"
	"slices"
	"testing"

	"golang.org/x/mod/semver"

	"github.com/reloader-dev/reloader/release/trust"
)

func TestOnlyAReleaseOlderThanTheNewestAtTheTargetIsADowngrade(t *testing.T) {
	held := []string{"v1.3.0", "v1.3.0-rc.1", "v1.0.0"}
	for version, downgrade := range map[string]bool{
		"v1.4.0": false, "v1.3.1-rc.1": false, // newer
		"v1.3.0": false, "v1.0.0": false, // already there: a re-run
		"v1.2.9": true, "v1.3.0-rc.2": true, "v0.9.0": true,
	} {
		_, err := decideDowngrade("t/reloader-release", held, version, false)
		if got := errors.Is(err, ErrDowngrade); got != downgrade {
			t.Errorf("%s over %v: downgrade %v (%v), want %v", version, held, got, err, downgrade)
		}
		if err != nil && !errors.Is(err, trust.ErrUntrusted) {
			t.Errorf("a downgrade must be a refusal (exit 3): %v", err)
		}
		if dg, err := decideDowngrade("t/reloader-release", held, version, true); err != nil || (dg != nil) != downgrade {
			t.Errorf("%s allowed: recorded %+v, %v", version, dg, err)
		}
	}
	if dg, err := decideDowngrade("t/reloader-release", nil, "v0.1.0", false); dg != nil || err != nil {
		t.Errorf("an empty target: %+v, %v", dg, err)
	}
}

// FuzzDowngradeDecision: whatever tags a registry lists, the verdict never
// panics, and a release accepted without --allow-downgrade is either held
// already or not older than any release the target holds.
func FuzzDowngradeDecision(f *testing.F) {
	f.Add("v1.3.0", "v1.0.0", "v1.2.0")
	f.Add("v1.3.0-rc.1", "v1.3.0", "x")
	f.Fuzz(func(t *testing.T, a, b, version string) {
		var held []string
		for _, tag := range []string{a, b} {
			if semver.IsValid(tag) && semver.Canonical(tag) == tag {
				held = append(held, tag)
			}
		}
		slices.SortFunc(held, func(x, y string) int { return semver.Compare(y, x) })
		dg, err := decideDowngrade("t/reloader-release", held, version, false)
		if dg != nil {
			t.Fatalf("a downgrade was recorded without being allowed: %+v", dg)
		}
		if err != nil || slices.Contains(held, version) {
			return
		}
		for _, h := range held {
			if semver.Compare(version, h) < 0 {
				t.Fatalf("%s accepted over %s", version, h)
			}
		}
	})
}

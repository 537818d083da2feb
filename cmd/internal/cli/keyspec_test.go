package cli

import (
	"testing"
	"time"
)

// A --key value is a path, or a path and the window of a key being rotated
// out; a day means through its end, UTC. Anything else is refused, naming
// the form wanted, so a typo never silently drops a window.
func TestAKeySpecIsAPathWithAnOptionalNotAfter(t *testing.T) {
	endOfDay := time.Date(2027, 1, 31, 23, 59, 59, 999999999, time.UTC)
	for spec, want := range map[string]time.Time{
		"cosign.pub":                                  {},
		"old.pub,not-after=2027-01-31":                endOfDay,
		"old.pub,not-after=2027-01-31T12:00:00Z":      time.Date(2027, 1, 31, 12, 0, 0, 0, time.UTC),
		"old.pub,not-after=2027-01-31T12:00:00+01:00": time.Date(2027, 1, 31, 11, 0, 0, 0, time.UTC),
	} {
		k, err := ParseKeySpec(spec)
		if err != nil || k.Path == "" || !k.NotAfter.Equal(want) {
			t.Errorf("ParseKeySpec(%q) = %+v, %v; want not-after %v", spec, k, err, want)
		}
	}
	for _, bad := range []string{"", ",not-after=2027-01-31", "old.pub,until=2027-01-31", "old.pub,not-after=", "old.pub,not-after=31/01/2027", "old.pub,not-after"} {
		if k, err := ParseKeySpec(bad); err == nil {
			t.Errorf("ParseKeySpec(%q) = %+v, want an error", bad, k)
		}
	}
}

package decide

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/controller/annotations"
)

func TestChangeWindowOpensAtItsStartInItsZone(t *testing.T) {
	w, err := ParseWindow("CRON_TZ=Europe/Berlin 0 22 * * 1-5 8h; 0 10 * * 6 2h")
	if err != nil {
		t.Fatal(err)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string, loc *time.Location) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, tc := range []struct {
		now  time.Time
		want time.Duration
	}{
		{at("2026-12-02 21:00", berlin), time.Hour},          // Wednesday, before the night window
		{at("2026-12-02 22:00", berlin), 0},                  // its start
		{at("2026-12-03 05:59", berlin), 0},                  // inside it, past midnight
		{at("2026-12-03 06:00", berlin), 16 * time.Hour},     // closed at its end; Thursday 22:00 next
		{at("2026-12-05 09:30", time.UTC), 30 * time.Minute}, // Saturday 10:00 UTC (no CRON_TZ)
		{at("2026-12-05 11:59", time.UTC), 0},                // inside the Saturday window
		{at("2026-12-06 12:00", berlin), 34 * time.Hour},     // Sunday noon Berlin: Monday 22:00 next
		{at("2026-03-28 22:00", berlin), 47 * time.Hour},     // Monday 22:00 across the night clocks go forward
	} {
		if got := w.OpensIn(tc.now); got != tc.want {
			t.Errorf("at %s: opens in %s, want %s", tc.now, got, tc.want)
		}
	}
	var none *Window
	if none.OpensIn(time.Now()) != 0 {
		t.Error("no window must always be open")
	}
}

func TestChangeWindowErrorsNameWhatIsWrong(t *testing.T) {
	for spec, want := range map[string]string{
		"0 22 * * 1-5":                       "is not a positive duration",
		"0 22 * * 1-5 -1h":                   "is not a positive duration",
		"CRON_TZ=Mars/Olympus 0 22 * * * 1h": "Mars/Olympus",
		"61 22 * * * 1h":                     "schedule",
		"@every 1h 30m":                      "@every",
		"8h":                                 "want a cron schedule and a duration",
	} {
		_, err := ParseWindow(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one containing %q", spec, err, want)
		}
	}
	for _, spec := range []string{"", "always", " always "} {
		if w, err := ParseWindow(spec); w != nil || err != nil {
			t.Errorf("%q: %v %v, want no window", spec, w, err)
		}
	}
}

func FuzzParseWindow(f *testing.F) {
	for _, s := range []string{"CRON_TZ=Europe/Berlin 0 22 * * 1-5 8h; 0 10 * * 6 2h", "always", "* * * * * 1s", "@daily 1h"} {
		f.Add(s)
	}
	now := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWindow(s)
		if err != nil {
			return
		}
		if in := w.OpensIn(now); in > 0 && w.OpensIn(now.Add(in)) != 0 {
			t.Fatalf("%q: opens in %s, but is not open then", s, in)
		}
	})
}

// A due reload outside the window waits until it opens; the workload's
// annotation overrides --change-window, "always" opts out, and an
// annotation that does not parse holds the reload and is a problem.
func TestDueReloadsWaitForTheWindow(t *testing.T) {
	r := &testReader{states: map[Resource]State{appCM: existing("c2"), creds: existing("s1")}}
	flag, err := ParseWindow(fmt.Sprintf("%d %d * * * 1h", now.Add(2*time.Hour).Minute(), now.Add(2*time.Hour).Hour()))
	if err != nil {
		t.Fatal(err)
	}
	open := fmt.Sprintf("%d %d * * * 1h", now.Add(-time.Minute).Minute(), now.Add(-time.Minute).Hour())
	for name, tc := range map[string]struct {
		ann     []string
		in      time.Duration
		invalid bool
	}{
		"--change-window closed":    {in: 2 * time.Hour},
		"annotation open":           {ann: []string{names.ChangeWindow, open}},
		"annotation always":         {ann: []string{names.ChangeWindow, "always"}},
		"annotation does not parse": {ann: []string{names.ChangeWindow, "0 22 * * *"}, invalid: true},
	} {
		v := deployment(t, with(append([]string{names.Auto, "true", annotations.Applied, recorded}, tc.ann...)...))
		d := Decide(Options{ChangeWindow: flag}, v, r, now)
		if len(d.Reloads) == 0 {
			t.Fatalf("%s: no reload due", name)
		}
		if d.WindowOpensIn != tc.in || d.WindowInvalid != tc.invalid {
			t.Errorf("%s: opens in %s, invalid %v; want %s, %v (problems %q)", name, d.WindowOpensIn, d.WindowInvalid, tc.in, tc.invalid, d.Problems)
		}
		if tc.invalid && !strings.Contains(strings.Join(d.Problems, ";"), names.ChangeWindow+" on the metadata") {
			t.Errorf("%s: problems %q do not name the annotation", name, d.Problems)
		}
	}
}

package support

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTheRepositorysSupportTableAndAdvisoriesParse(t *testing.T) {
	if _, err := ReadTable("../support.yaml"); err != nil {
		t.Errorf("release/support.yaml: %v", err)
	}
	if _, err := ReadAdvisories("../advisories"); err != nil {
		t.Errorf("release/advisories: %v", err)
	}
	as, err := ReadAdvisories("testdata/advisories")
	if err != nil || len(as) != 1 || as[0].ID != "RELOADER-2026-0001" {
		t.Fatalf("the example advisory: %v %v", as, err)
	}
}

func TestSupportTableIsNewestFirstAndKnowsWhenSupportEnds(t *testing.T) {
	tab, err := ParseTable([]byte(`apiVersion: reloader.dev/support/v1
series:
  - {series: v1.9, released: "2026-01-01", endOfSupport: "2026-12-01"}
  - {series: v1.10, released: "2026-06-01", endOfSupport: "2027-06-01"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if tab.Series[0].Series != "v1.10" || tab.Series[1].Series != "v1.9" {
		t.Errorf("order %v, want v1.10 before v1.9 (semantic, not lexical)", tab.Series)
	}
	old := tab.Series[1]
	if !old.Supported(time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)) || old.Supported(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Error("support must end at 00:00 UTC of endOfSupport")
	}
	if !old.Contains("v1.9.3") || old.Contains("v1.10.0") || old.Contains("v1.9") || old.Contains("1.9.3") {
		t.Error("v1.9 must contain v1.9.3 only")
	}
}

func TestSupportTableRejectsWhatItCannotShow(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"empty", "", "apiVersion"},
		{"unknown field", "apiVersion: reloader.dev/support/v1\nseries: [{series: v1.0, released: \"2026-01-01\", endOfSupport: \"2027-01-01\", eol: x}]\n", "unknown field"},
		{"patch version", "apiVersion: reloader.dev/support/v1\nseries: [{series: v1.0.1, released: \"2026-01-01\", endOfSupport: \"2027-01-01\"}]\n", "not vMAJOR.MINOR"},
		{"twice", "apiVersion: reloader.dev/support/v1\nseries: [{series: v1.0, released: \"2026-01-01\", endOfSupport: \"2027-01-01\"}, {series: v1.0, released: \"2026-01-01\", endOfSupport: \"2027-01-01\"}]\n", "listed twice"},
		{"ends before release", "apiVersion: reloader.dev/support/v1\nseries: [{series: v1.0, released: \"2027-01-01\", endOfSupport: \"2026-01-01\"}]\n", "not after its release"},
		{"no end", "apiVersion: reloader.dev/support/v1\nseries: [{series: v1.0, released: \"2027-01-01\"}]\n", "both required"},
		{"bad date", "apiVersion: reloader.dev/support/v1\nseries: [{series: v1.0, released: \"1 Jan 2027\", endOfSupport: \"2028-01-01\"}]\n", "not YYYY-MM-DD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTable([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestAdvisoryAffectsTheVersionsItsRangesSay(t *testing.T) {
	data, err := os.ReadFile("testdata/advisories/RELOADER-2026-0001.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := ParseAdvisory(data)
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]bool{"v0.9.0": true, "v1.0.0": true, "v1.0.1": true, "v1.0.2": false, "v1.1.0": false} {
		if got := a.Affects(v); got != want {
			t.Errorf("Affects(%s) = %v, want %v", v, got, want)
		}
	}
	last := `{"id":"X-1","modified":"2026-01-01T00:00:00Z","summary":"s","affected":[{"package":{"ecosystem":"Go","name":"github.com/reloader-dev/reloader"},"ranges":[{"type":"SEMVER","events":[{"introduced":"1.1.0"},{"last_affected":"1.1.3"}]}],"versions":["v0.5.0"]}]}`
	b, err := ParseAdvisory([]byte(last))
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]bool{"v1.0.9": false, "v1.1.0": true, "v1.1.3": true, "v1.1.4": false, "v0.5.0": true} {
		if got := b.Affects(v); got != want {
			t.Errorf("last_affected: Affects(%s) = %v, want %v", v, got, want)
		}
	}
}

func TestAdvisoriesAreHeldToTheOSVSchema(t *testing.T) {
	ok := `{"id":"RELOADER-2026-0002","modified":"2026-01-01T00:00:00Z","summary":"s","affected":[{"package":{"ecosystem":"Go","name":"github.com/reloader-dev/reloader"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"}]}]}]}`
	if _, err := ParseAdvisory([]byte(ok)); err != nil {
		t.Fatalf("minimal advisory: %v", err)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"unknown field", `"summary"`, `"sumary"`, "unknown field"},
		{"bad id", `RELOADER-2026-0002`, `reloader 2`, "not an OSV identifier"},
		{"no modified", `"modified":"2026-01-01T00:00:00Z",`, ``, "modified is required"},
		{"other package", `github.com/reloader-dev/reloader`, `github.com/stakater/Reloader`, "want Go github.com/reloader-dev/reloader"},
		{"git range", `"SEMVER"`, `"GIT"`, "want SEMVER"},
		{"two fields in an event", `{"introduced":"0"}`, `{"introduced":"0","fixed":"1.0.0"}`, "exactly one"},
		{"not semver", `{"introduced":"0"}`, `{"introduced":"one"}`, "not a semantic version"},
		{"no introduced", `{"introduced":"0"}`, `{"fixed":"1.0.0"}`, "no introduced event"},
		{"trailing data", `]}]}]}`, `]}]}]}{}`, "trailing data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseAdvisory([]byte(strings.Replace(ok, tc.from, tc.to, 1)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestAdvisoryFilesAreNamedForTheirID(t *testing.T) {
	dir := t.TempDir()
	data, _ := os.ReadFile("testdata/advisories/RELOADER-2026-0001.json")
	_ = os.WriteFile(filepath.Join(dir, "advisory.json"), data, 0o644)
	if _, err := ReadAdvisories(dir); err == nil || !strings.Contains(err.Error(), "RELOADER-2026-0001.json") {
		t.Errorf("error %v, want one naming the expected file name", err)
	}
	dir = t.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	if _, err := ReadAdvisories(dir); err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Errorf("error %v, want one naming the stray file", err)
	}
}

func TestAdvisoryAffectsASeriesWhenAnyOfItsVersionsIs(t *testing.T) {
	a, err := ParseAdvisory([]byte(`{"id":"X-2","modified":"2026-01-01T00:00:00Z","summary":"s","affected":[{"package":{"ecosystem":"Go","name":"github.com/reloader-dev/reloader"},"ranges":[{"type":"SEMVER","events":[{"introduced":"1.1.4"},{"fixed":"1.2.1"}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for series, want := range map[string]bool{"v1.0": false, "v1.1": true, "v1.2": true, "v1.3": false} {
		if got := a.AffectsSeries(Series{Series: series}); got != want {
			t.Errorf("AffectsSeries(%s) = %v, want %v", series, got, want)
		}
	}
}

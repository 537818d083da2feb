package pipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/security"
	"github.com/reloader-dev/reloader/test/registry"
)

// A release made by the pipeline (its fast mode) carries the support
// period's end in its lock and on its page, and publishes a security.txt.
func TestAReleasePublishesTheEndOfSupportAndASecurityTxt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and signs a release")
	}
	reg := registry.InProcess(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := releasetest.Publish(context.Background(), releasetest.Options{Registry: reg.Host, Signer: s, Seed: 51, OutDir: out}); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(out, "page", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `href="security.txt"`) {
		t.Error("the versions page does not link the security.txt")
	}
	checkCRADuties(t, out, string(html))
}

// checkCRADuties holds a release's published output to the machine-readable
// duties of the Cyber Resilience Act: the support period's end, per series,
// in the signed lock and on the versions page; a security.txt (RFC 9116)
// naming the contact and the disclosure policy the release configuration
// declares, expiring no later than the support of the release's series.
func checkCRADuties(t *testing.T, outDir, html string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(outDir, release.LockFileName))
	if err != nil {
		t.Fatal(err)
	}
	l, err := release.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if l.Support == nil || len(l.Support.Series) == 0 {
		t.Fatal("the lock carries no support table")
	}
	for _, s := range l.Support.Series {
		end := s.EndOfSupport.Format(time.DateOnly)
		if !strings.Contains(html, `data-series="`+s.Series+`" data-end-of-support="`+end+`"`) || !strings.Contains(html, `<time datetime="`+end+`">`) {
			t.Errorf("the versions page does not give series %s's end of support %s machine-readably", s.Series, end)
		}
	}
	cfg, err := security.Read("../../release/security.yaml")
	if err != nil {
		t.Fatal(err)
	}
	txt, err := os.ReadFile(filepath.Join(outDir, "page", security.FileName))
	if err != nil {
		t.Fatalf("the release publishes no security.txt: %v", err)
	}
	for _, want := range []string{"Contact: " + cfg.Contact + "\n", "Policy: " + cfg.Policy + "\n", "Preferred-Languages: en\n", "Canonical: " + cfg.Canonical + "\n"} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("security.txt lacks %q:\n%s", want, txt)
		}
	}
	m := regexp.MustCompile(`(?m)^Expires: (\S+)$`).FindStringSubmatch(string(txt))
	if m == nil {
		t.Fatalf("security.txt has no Expires:\n%s", txt)
	}
	expires, err := time.Parse(time.RFC3339, m[1])
	if err != nil || !expires.After(l.Created) || !expires.Before(l.Created.AddDate(1, 0, 0)) {
		t.Errorf("security.txt expires %q (%v), want after the release and within a year of it", m[1], err)
	}
	if s, ok := l.Support.SeriesOf(l.Version); ok && expires.After(s.EndOfSupport.Time) {
		t.Errorf("security.txt expires %s, after %s's support ends %s", expires, s.Series, s.EndOfSupport.Format(time.DateOnly))
	}
}

package release

import (
	"strings"
	"testing"
	"time"
)

func sampleLock() *Lock {
	d := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	return &Lock{
		Schema:  LockSchema,
		Version: "v1.2.3",
		Source:  "https://github.com/reloader-dev/reloader",
		Commit:  strings.Repeat("a", 40),
		Created: time.Unix(1700000000, 0).UTC(),
		Signer:  Signer{Identity: "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3", Issuer: "https://token.actions.githubusercontent.com"},
		Artifacts: []Artifact{
			{Kind: KindImageIndex, Name: "reloader", Variant: "standard", Repository: "ghcr.io/reloader-dev/reloader", Tag: "v1.2.3", Digest: d("1"), Size: 900, MediaType: "application/vnd.oci.image.index.v1+json"},
			{Kind: KindImage, Name: "reloader", Variant: "standard", Platform: "linux/amd64", Repository: "ghcr.io/reloader-dev/reloader", Digest: d("2"), Size: 700, MediaType: "application/vnd.oci.image.manifest.v1+json"},
			{Kind: KindSBOM, Name: "reloader", Variant: "standard", Platform: "linux/amd64", Repository: "ghcr.io/reloader-dev/reloader", Digest: d("3"), Size: 500, MediaType: "application/vnd.oci.image.manifest.v1+json", Subject: d("2"), PredicateType: "https://spdx.dev/Document"},
		},
	}
}

func TestLockRoundTripsCanonically(t *testing.T) {
	l := sampleLock()
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse of a marshalled valid lock: %v", err)
	}
	b2, err := got.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(b2) {
		t.Fatalf("re-marshal differs:\n%s\n%s", b, b2)
	}
}

func TestLockRejectsWhatIsWrongByName(t *testing.T) {
	cases := map[string]struct {
		mutate func(*Lock)
		want   string
	}{
		"schema":         {func(l *Lock) { l.Schema = "v0" }, "schema"},
		"short digest":   {func(l *Lock) { l.Artifacts[1].Digest = "sha256:abc" }, "digest"},
		"dangling subj":  {func(l *Lock) { l.Artifacts[2].Subject = "sha256:" + strings.Repeat("f", 64) }, "not an artifact of this release"},
		"no signer":      {func(l *Lock) { l.Signer = Signer{} }, "signer"},
		"keyless issuer": {func(l *Lock) { l.Signer.Issuer = "" }, "issuer"},
		"unknown kind":   {func(l *Lock) { l.Artifacts[0].Kind = "tarball" }, "unknown kind"},
		"duplicate":      {func(l *Lock) { l.Artifacts = append(l.Artifacts, l.Artifacts[0]) }, "listed twice"},
		"platformless":   {func(l *Lock) { l.Artifacts[1].Platform = "" }, "without platform"},
		"bad variant":    {func(l *Lock) { l.Artifacts[1].Variant = "fips140" }, `unknown variant "fips140"`},
		"bad commit":     {func(l *Lock) { l.Commit = "main" }, "commit"},
		// Every consumer compares versions by semver, which reads none of
		// these as the release they name: a lock carrying one would slip
		// past advisories, the support table and the downgrade check.
		"version without v":      {func(l *Lock) { l.Version = "1.0.0" }, `version "1.0.0" is not vMAJOR.MINOR.PATCH[-PRE]`},
		"version with build":     {func(l *Lock) { l.Version = "v1.0.0+build.7" }, `version "v1.0.0+build.7"`},
		"version short":          {func(l *Lock) { l.Version = "v1.0" }, `version "v1.0"`},
		"version leading zero":   {func(l *Lock) { l.Version = "v1.02.0" }, `version "v1.02.0"`},
		"version empty pre part": {func(l *Lock) { l.Version = "v1.0.0-rc..1" }, `version "v1.0.0-rc..1"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			l := sampleLock()
			tc.mutate(l)
			b, err := l.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: got %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
	if _, err := Parse([]byte(`{"schema":"` + LockSchema + `","extra":1}`)); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Fatalf("unknown field: got %v", err)
	}
	b, _ := sampleLock().Marshal()
	if _, err := Parse(append(b, []byte("{}")...)); err == nil {
		t.Fatal("trailing data accepted")
	}
}

// The versions a release may have: what semver orders as the release it
// names, with a pre-release or without.
func TestCheckVersionAcceptsWhatSemverOrders(t *testing.T) {
	for _, v := range []string{"v0.0.0-local", "v1.2.3", "v10.20.30", "v1.3.0-rc.1", "v2.0.0-alpha-2.x"} {
		if err := CheckVersion(v); err != nil {
			t.Errorf("%s: %v", v, err)
		}
	}
}

func FuzzParseLock(f *testing.F) {
	b, _ := sampleLock().Marshal()
	f.Add(b)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"artifacts":[{"kind":"image"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			return
		}
		// Whatever parses must validate and survive a canonical round trip.
		out, err := l.Marshal()
		if err != nil {
			t.Fatalf("marshal of a parsed lock: %v", err)
		}
		if _, err := Parse(out); err != nil {
			t.Fatalf("re-parse of a parsed lock: %v", err)
		}
	})
}

func TestLockScanRecordIsCheckedAndRoundTrips(t *testing.T) {
	d := "sha256:" + strings.Repeat("d", 64)
	good := &Scan{Scanner: "trivy", ScannerVersion: "0.74.0", DBDigest: d, DBBuilt: time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC),
		Counts: map[string]int{"HIGH": 1}, Exceptions: []ScanException{{ID: "CVE-2099-0002", Package: "golang.org/x/time", Expires: "2027-01-31", Justification: "unreachable"}}}
	l := sampleLock()
	l.Scan = good
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(b)
	if err != nil || !got.Scanned() || got.Scan.Exceptions[0].ID != "CVE-2099-0002" || !got.Scan.DBBuilt.Equal(good.DBBuilt) {
		t.Fatalf("Parse = %+v, %v", got, err)
	}
	if l := sampleLock(); l.Scanned() {
		t.Error("a lock without a scan record counts as scanned")
	}
	for name, sc := range map[string]*Scan{
		"skipped with results": {Skipped: true, Scanner: "trivy"},
		"no scanner":           {DBDigest: d},
		"no database digest":   {Scanner: "trivy", ScannerVersion: "0.74.0"},
		"exception without id": {Scanner: "trivy", ScannerVersion: "0.74.0", DBDigest: d, Exceptions: []ScanException{{Package: "p", Expires: "2027-01-01"}}},
	} {
		l := sampleLock()
		l.Scan = sc
		if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "scan") {
			t.Errorf("%s: Validate = %v", name, err)
		}
	}
}

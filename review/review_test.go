package review

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openvex/go-vex/pkg/vex"

	"github.com/reloader-dev/reloader/release/gate"
)

// gateResult runs the real release gate on a Trivy report from release/gate/testdata.
func gateResult(t *testing.T, report string, p *gate.Policy) *gate.Result {
	t.Helper()
	rep, err := gate.ReadReport("../release/gate/testdata/reports/" + report)
	if err != nil {
		t.Fatal(err)
	}
	res := gate.Evaluate(p, []gate.ScannedImage{{Image: "app linux/amd64", Report: rep}}, fixtureCreated)
	return &res
}

// releasePolicy accepts the x/sync finding of high-fixed.json until expires.
func releasePolicy(t *testing.T, expires string) *gate.Policy {
	t.Helper()
	return releasePolicyOfKind(t, expires, "")
}

// releasePolicyOfKind adds kind lines (YAML, indented as the exception's
// fields) to releasePolicy's exception.
func releasePolicyOfKind(t *testing.T, expires, kind string) *gate.Policy {
	t.Helper()
	p, err := gate.ParsePolicy([]byte(`apiVersion: reloader.dev/release-policy/v1
failOn: [HIGH, CRITICAL]
exceptions:
  - id: CVE-2099-0001
    package: golang.org/x/sync
    justification: errgroup's vulnerable path needs a cancelled parent context, which the app never has
    approvedBy: Jane Doe <jane.doe@example.com>
    approvedOn: "` + approvedBefore(t, expires) + `"
    expires: "` + expires + `"
` + kind))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReviewListsEveryComponentWithLicenceSupplierAndWhereItWasFound(t *testing.T) {
	r := build(t, releases(t)[newSync], nil, nil)
	want := []Component{
		{Name: "example.com/app", Version: "UNKNOWN", PURL: "pkg:golang/example.com/app", Licence: "NOASSERTION", Verdict: VerdictNone},
		{Name: "golang.org/x/sync", Version: newSync, PURL: "pkg:golang/golang.org/x/sync@" + newSync, Licence: "BSD-3-Clause", Verdict: VerdictAllowed},
		{Name: "stdlib", Version: "go1.26.8", PURL: "pkg:golang/stdlib@1.26.8", Licence: "BSD-3-Clause", Verdict: VerdictAllowed},
	}
	if len(r.Components) != len(want) {
		t.Fatalf("components: got %d %+v, want %d", len(r.Components), r.Components, len(want))
	}
	for i, w := range want {
		got := r.Components[i]
		t.Run(w.Name, func(t *testing.T) {
			if got.Name != w.Name || got.Version != w.Version || got.PURL != w.PURL || got.Licence != w.Licence || got.Verdict != w.Verdict {
				t.Errorf("got %+v\nwant %+v", got, w)
			}
			if want := []Carrier{{Image: "app", Variant: "standard", Platform: "linux/amd64"}}; !slices.Equal(got.In, want) {
				t.Errorf("carried by %+v, want %+v", got.In, want)
			}
			if got.Source != "Go module in /app" {
				t.Errorf("source %q, want the Go binary it was read from", got.Source)
			}
			// The SBOM names a supplier for every module: the producer
			// for our own, the path's organisation for the others.
			if want := map[string]string{"example.com/app": "Example project", "golang.org/x/sync": "Go", "stdlib": "Go"}[w.Name]; !strings.HasSuffix(got.Supplier, want) || got.Supplier == "" {
				t.Errorf("supplier %q, want %q as the SBOM names it", got.Supplier, want)
			}
		})
	}
	if len(r.LicenceFindings) != 1 || r.LicenceFindings[0].Name != "example.com/app" || r.LicenceFindings[0].Verdict != VerdictNone {
		t.Errorf("licence findings %+v: NOASSERTION must be a finding and BSD-3-Clause must not", r.LicenceFindings)
	}
	if len(r.Licences) != 2 || r.Licences[0] != (LicenceCount{Licence: "BSD-3-Clause", Verdict: VerdictAllowed, Components: 2}) {
		t.Errorf("licence summary %+v", r.Licences)
	}
}

// Against CISA 2025 the SBOMs sbom.Generate makes carry a hash for every
// component (the go.sum hash of each module, the binary's for the standard
// library and the main module), the tools and the generation context; the
// fixture's own module declares no licence, and the check says so, naming
// it, rather than the SBOM claiming one.
func TestCISA2025NamesTheComponentWhoseLicenceNobodyDeclared(t *testing.T) {
	r := buildProfile(t, releases(t)[newSync], nil, nil, ProfileCISA2025)
	for _, s := range r.MinimumElements {
		if s.Profile != ProfileCISA2025 || len(s.Missing) != 1 {
			t.Fatalf("%s: profile %s, missing %+v, want only the licence", s.Format, s.Profile, s.Missing)
		}
		if m := s.Missing[0]; m.Element != "License" || !strings.Contains(m.Detail, "1 of 3 components have no licence: example.com/app") {
			t.Errorf("%s: missing %+v, want the License of example.com/app", s.Format, m)
		}
	}
	got := r.Failures([]string{CheckMinimumElements})
	if len(got) != 1 || !strings.Contains(got[0], "of cisa-2025") || !strings.Contains(got[0], "example.com/app") {
		t.Errorf("failures %q, want cisa-2025 naming example.com/app", got)
	}
}

func TestMinimumElementsAreCheckedInEverySBOM(t *testing.T) {
	r := build(t, releases(t)[newSync], nil, nil)
	// The SBOMs we generate name a supplier for every component and an
	// author: no NTIA element is missing in any of the three formats.
	want := map[string][]string{
		"SPDX-2.3":      nil,
		"SPDX-3.0.1":    nil,
		"CycloneDX 1.7": nil,
	}
	if len(r.MinimumElements) != 3 {
		t.Fatalf("checked %d SBOMs, want the SPDX 2.3, the SPDX 3.0.1 and the CycloneDX one", len(r.MinimumElements))
	}
	for _, s := range r.MinimumElements {
		var got []string
		for _, m := range s.Missing {
			got = append(got, m.Element)
			if m.Detail == "" {
				t.Errorf("%s %s: no detail", s.Format, m.Element)
			}
		}
		if strings.Join(got, "|") != strings.Join(want[s.Format], "|") {
			t.Errorf("%s missing %v, want %v", s.Format, got, want[s.Format])
		}
	}
}

func TestDiffOfTwoReleasesThatDifferInOneDependencyShowsExactlyThatChange(t *testing.T) {
	fs := releases(t)
	rp := releasePolicy(t, "2027-01-31")
	old := build(t, fs[oldSync], gateResult(t, "high-fixed.json", rp), rp)
	cur := build(t, fs[newSync], gateResult(t, "clean.json", rp), rp)
	d := Compare(old, cur)
	want := []ComponentChange{{Change: ChangeUpgraded, Name: "golang.org/x/sync", OldVersion: oldSync, NewVersion: newSync, Licence: "BSD-3-Clause"}}
	if len(d.Components) != 1 || d.Components[0] != want[0] {
		t.Errorf("component changes %+v, want exactly %+v", d.Components, want)
	}
	if len(d.Licences) != 0 {
		t.Errorf("licence changes %+v, want none", d.Licences)
	}
	if len(d.NewCVEs) != 0 || len(d.Resolved) != 1 || d.Resolved[0].ID != "CVE-2099-0001" {
		t.Errorf("new %+v resolved %+v: upgrading x/sync resolves CVE-2099-0001", d.NewCVEs, d.Resolved)
	}
	if d.Against.Version != "v1.0.0" {
		t.Errorf("against %q", d.Against.Version)
	}
	back := Compare(cur, old)
	if len(back.Components) != 1 || back.Components[0].Change != ChangeDowngraded || len(back.NewCVEs) != 1 {
		t.Errorf("reverse diff %+v", back)
	}
	if same := Compare(cur, cur); !same.Empty() {
		t.Errorf("a release compared with itself changed: %+v", same)
	}
}

func TestLicencePolicyJudgesNormalisedExpressions(t *testing.T) {
	p, err := ParseLicencePolicy([]byte("apiVersion: reloader.dev/licence-policy/v1\nallow: [Apache-2.0, MIT, BSD-3-Clause]\ndeny: [GPL-3.0-only, AGPL-3.0-only]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		raw, licence string
		verdict      Verdict
	}{
		{"Apache-2.0", "Apache-2.0", VerdictAllowed},
		{"apache-2.0", "Apache-2.0", VerdictAllowed},
		{"MIT AND BSD-3-Clause", "MIT AND BSD-3-Clause", VerdictAllowed},
		{"MIT OR GPL-3.0-only", "MIT OR GPL-3.0-only", VerdictAllowed},
		{"MPL-2.0", "MPL-2.0", VerdictNotAllowed},
		{"MIT AND MPL-2.0", "MIT AND MPL-2.0", VerdictNotAllowed},
		{"GPL-3.0-only", "GPL-3.0-only", VerdictDenied},
		{"MIT AND AGPL-3.0-only", "MIT AND AGPL-3.0-only", VerdictDenied},
		{"MPL-2.0 OR GPL-3.0-only", "MPL-2.0 OR GPL-3.0-only", VerdictNotAllowed},
		{"LicenseRef-Proprietary", "LicenseRef-Proprietary", VerdictNotAllowed},
		{"Not A Licence", "Not A Licence", VerdictInvalid},
		{"MIT AND", "MIT AND", VerdictInvalid},
		{"NOASSERTION", "NOASSERTION", VerdictNone},
		{"", "NOASSERTION", VerdictNone},
		{"NONE", "NOASSERTION", VerdictNone},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			licence, verdict := p.Judge(tc.raw)
			if licence != tc.licence || verdict != tc.verdict {
				t.Errorf("Judge(%q) = %q %s, want %q %s", tc.raw, licence, verdict, tc.licence, tc.verdict)
			}
		})
	}
}

func TestLicencePolicyRejectsWhatItCannotApply(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"empty", "", "empty"},
		{"wrong apiVersion", "apiVersion: v2\nallow: [MIT]\n", "apiVersion"},
		{"nothing allowed", "apiVersion: reloader.dev/licence-policy/v1\n", "allow lists no licence"},
		{"misspelt identifier", "apiVersion: reloader.dev/licence-policy/v1\nallow: [Apache2]\n", `"Apache2" is not an SPDX licence identifier`},
		{"allowed and denied", "apiVersion: reloader.dev/licence-policy/v1\nallow: [MIT]\ndeny: [mit]\n", "both allowed and denied"},
		{"unknown field", "apiVersion: reloader.dev/licence-policy/v1\nallow: [MIT]\ndenied: [GPL-3.0-only]\n", "unknown field"},
		{"unknown field in osPackages", "apiVersion: reloader.dev/licence-policy/v1\nallow: [MIT]\nosPackages:\n  allow: [MIT]\n  ignore: true\n", "unknown field"},
		{"nothing allowed for OS packages", "apiVersion: reloader.dev/licence-policy/v1\nallow: [MIT]\nosPackages:\n  deny: [GPL-3.0-only]\n", "osPackages.allow lists no licence"},
		{"misspelt OS identifier", "apiVersion: reloader.dev/licence-policy/v1\nallow: [MIT]\nosPackages:\n  allow: [GPLv3]\n", `osPackages.allow: "GPLv3"`},
		{"OS licence allowed and denied", "apiVersion: reloader.dev/licence-policy/v1\nallow: [MIT]\nosPackages:\n  allow: [MIT]\n  deny: [mit]\n", "osPackages.MIT is both allowed and denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLicencePolicy([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := ReadLicencePolicy("licence-policy.yaml"); err != nil {
		t.Errorf("the repository's licence policy: %v", err)
	}
}

// The policy ships in the binary: the review needs no source tree, and the
// file printed for a reviewer is the one applied.
func TestTheBuiltInLicencePolicyIsTheRepositorysFile(t *testing.T) {
	file, err := os.ReadFile("licence-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(DefaultLicencePolicyYAML(), file) {
		t.Error("DefaultLicencePolicyYAML is not review/licence-policy.yaml as written")
	}
	p, err := DefaultLicencePolicy()
	if err != nil {
		t.Fatal(err)
	}
	if p.OSPackages == nil {
		t.Fatal("the built-in policy has no osPackages section")
	}
}

// bash and glibc of the UBI base are programs beside ours, not code linked
// into our binaries: the built-in policy allows their GPL and LGPL, while the
// same licence on a Go module stays denied, and AGPL stays denied for both.
func TestOSPackagesAreJudgedApartFromLinkedModules(t *testing.T) {
	p, err := DefaultLicencePolicy()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, purl, licence string
		want                Verdict
	}{
		{"bash (RPM)", "pkg:rpm/redhat/bash@5.1.8-9.el9?arch=x86_64", "GPL-3.0-or-later", VerdictAllowed},
		{"glibc (RPM)", "pkg:rpm/redhat/glibc@2.34-125.el9_5.1?arch=x86_64", "LGPL-2.1-or-later AND GPL-2.0-or-later", VerdictAllowed},
		{"a Debian package", "pkg:deb/debian/coreutils@9.1", "GPL-3.0-or-later", VerdictAllowed},
		{"an AGPL RPM", "pkg:rpm/redhat/x@1", "AGPL-3.0-only", VerdictDenied},
		{"an RPM without a licence", "pkg:rpm/redhat/x@1", "", VerdictNone},
		{"a GPL Go module", "pkg:golang/example.com/gpl@v1.0.0", "GPL-3.0-or-later", VerdictDenied},
		{"an LGPL Go module", "pkg:golang/example.com/lgpl@v1.0.0", "LGPL-2.1-or-later", VerdictNotAllowed},
		{"an MIT Go module", "pkg:golang/github.com/x/y@v1.0.0", "MIT", VerdictAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := p.JudgeComponent(Component{PURL: tc.purl, LicenceDeclared: tc.licence})
			if got != tc.want {
				t.Errorf("%s under %s: %s, want %s", tc.purl, tc.licence, got, tc.want)
			}
		})
	}
	// Without the section, OS packages are judged like everything else.
	plain, err := ParseLicencePolicy([]byte("apiVersion: reloader.dev/licence-policy/v1\nallow: [MIT]\ndeny: [GPL-3.0-or-later]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, v := plain.JudgeComponent(Component{PURL: "pkg:rpm/redhat/bash@5", LicenceDeclared: "GPL-3.0-or-later"}); v != VerdictDenied {
		t.Errorf("bash under a policy without osPackages: %s, want %s", v, VerdictDenied)
	}
}

func TestFailOnNamesEachFailingCheck(t *testing.T) {
	fs := releases(t)
	rp := releasePolicy(t, "2027-01-31")
	expired := releasePolicy(t, "2026-11-01")
	for _, tc := range []struct {
		name   string
		r      *Review
		checks string
		want   []string
	}{
		{"licence finding", build(t, fs[newSync], gateResult(t, "clean.json", rp), rp), "licence", []string{"licence: 1 components"}},
		{"minimum elements present", build(t, fs[newSync], gateResult(t, "clean.json", rp), rp), "minimum-elements", nil},
		{"a component without a supplier", build(t, withoutSupplier(t, fs[newSync], "golang.org/x/sync"), gateResult(t, "clean.json", rp), rp), "minimum-elements", []string{"minimum-elements: 1 of 3 SBOMs"}},
		{"clean gate passes", build(t, fs[newSync], gateResult(t, "clean.json", rp), rp), "vulnerability", nil},
		{"excepted finding passes", build(t, fs[oldSync], gateResult(t, "high-fixed.json", rp), rp), "vulnerability", nil},
		{"no scan on record fails closed", build(t, fs[newSync], nil, rp), "vulnerability", []string{"vulnerability: neither the lock nor a gate report records a scan"}},
		{"failed gate", build(t, fs[oldSync], gateResult(t, "high-unfixed.json", rp), rp), "vulnerability", []string{"vulnerability: the release gate failed"}},
		{"expired exception", build(t, fs[oldSync], gateResult(t, "high-fixed.json", expired), expired), "vulnerability", []string{"vulnerability: the release gate failed"}},
		{"all three", build(t, withoutSupplier(t, fs[newSync], "golang.org/x/sync"), nil, rp), "licence, minimum-elements,vulnerability", []string{"licence:", "minimum-elements:", "vulnerability:"}},
		{"none asked", build(t, fs[newSync], nil, rp), "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checks, err := ParseChecks([]string{tc.checks})
			if err != nil {
				t.Fatal(err)
			}
			got := tc.r.Failures(checks)
			if len(got) != len(tc.want) {
				t.Fatalf("failures %q, want %d like %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("failure %q, want it to start %q", got[i], tc.want[i])
				}
			}
			if strings.HasPrefix(tc.name, "a component without") && !strings.Contains(got[0], "golang.org/x/sync") {
				t.Errorf("failure %q does not name the component without a supplier", got[0])
			}
		})
	}
	if _, err := ParseChecks([]string{"licence,cves"}); err == nil || !strings.Contains(err.Error(), `"cves"`) {
		t.Errorf("unknown check: %v", err)
	}
	if c, err := ParseChecks([]string{"license"}); err != nil || c[0] != CheckLicence {
		t.Errorf("license spelling: %v %v", c, err)
	}
}

// Issue 22 changed this: an exception used to become not_affected whatever
// it was. Now only a not_affected exception says so; an accepted risk (the
// kind of every exception that names none) is affected, its action
// statement naming the expiry, and an expired one is never emitted.
func TestExceptionsArePublishedAsOpenVEXSayingWhatTheyAre(t *testing.T) {
	f := releases(t)[oldSync]
	const notAffected = "    kind: not_affected\n    vexJustification: vulnerable_code_not_in_execute_path\n"
	for _, tc := range []struct {
		name, expires, kind string
		statements          int
		status              vex.Status
	}{
		{"an accepted risk is affected", "2027-01-31", "", 1, vex.StatusAffected},
		{"a not_affected exception is not_affected", "2027-01-31", notAffected, 1, vex.StatusNotAffected},
		{"an expired exception accepts nothing", "2026-11-01", "", 0, ""},
		{"an expired not_affected exception is not emitted either", "2026-11-01", notAffected, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := releasePolicyOfKind(t, tc.expires, tc.kind)
			r := build(t, f, gateResult(t, "high-fixed.json", rp), rp)
			data, err := OpenVEX(f.lock, r)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := vex.Parse(data)
			if err != nil {
				t.Fatalf("go-vex cannot read our OpenVEX: %v\n%s", err, data)
			}
			if len(doc.Statements) != tc.statements {
				t.Fatalf("%d statements, want %d:\n%s", len(doc.Statements), tc.statements, data)
			}
			if tc.statements == 0 {
				return
			}
			s := doc.Statements[0]
			if s.Vulnerability.Name != "CVE-2099-0001" || s.Status != tc.status {
				t.Errorf("statement %+v, want %s", s, tc.status)
			}
			switch tc.status {
			case vex.StatusAffected:
				if !strings.Contains(s.ActionStatement, "until 2027-01-31") || s.Justification != "" || s.ImpactStatement != "" {
					t.Errorf("an accepted risk: action %q, justification %q, impact %q; want the expiry in the action statement only", s.ActionStatement, s.Justification, s.ImpactStatement)
				}
			case vex.StatusNotAffected:
				if s.Justification != vex.VulnerableCodeNotInExecutePath || !strings.Contains(s.ImpactStatement, "cancelled parent context") {
					t.Errorf("not_affected: justification %q, impact %q", s.Justification, s.ImpactStatement)
				}
			}
			if len(s.Products) == 0 {
				t.Fatal("no products")
			}
			for _, p := range s.Products {
				if !strings.HasPrefix(p.ID, "pkg:oci/app@sha256%3A") || strings.Contains(p.ID, "repository_url") {
					t.Errorf("product %q: want the image by digest only, so the statement survives relocation", p.ID)
				}
				if p.Subcomponents[0].ID != "pkg:golang/golang.org/x/sync@"+oldSync {
					t.Errorf("product %q: subcomponent %q, want the x/sync PURL", p.ID, p.Subcomponents[0].ID)
				}
			}
			if m := doc.Matches("CVE-2099-0001", s.Products[0].ID, []string{"pkg:golang/golang.org/x/sync@" + oldSync}); len(m) != 1 {
				t.Errorf("go-vex does not match the statement to the image and module: %v", m)
			}
		})
	}
}

func TestRenderedReviewIsSelfContained(t *testing.T) {
	fs := releases(t)
	rp := releasePolicy(t, "2027-01-31")
	// One component lacks a supplier, so the page has a missing minimum
	// element to show.
	r := build(t, withoutSupplier(t, fs[newSync], "golang.org/x/sync"), gateResult(t, "clean.json", rp), rp)
	r.Diff = Compare(build(t, fs[oldSync], gateResult(t, "high-fixed.json", rp), rp), r)
	html, err := r.HTML([]string{"licence: 1 components"})
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	for _, want := range []string{"default-src 'none'", `<svg id="licence-chart"`, "golang.org/x/sync", "BSD-3-Clause", "upgraded", "CVE-2099-0001", "Supplier Name", "Profile <b>ntia-2021</b>", "Fails --fail-on"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Nothing is loaded from anywhere: no src attribute, no stylesheet link,
	// no url() or @import; the only link is the OpenVEX file next to it.
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`\ssrc=`), regexp.MustCompile(`<link`), regexp.MustCompile(`url\(`), regexp.MustCompile(`@import`)} {
		if bad.MatchString(page) {
			t.Errorf("page fetches something: %s", bad)
		}
	}
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		if m[1] != FileOpenVEX {
			t.Errorf("page links to %q", m[1])
		}
	}
	md, err := r.Markdown(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| upgraded | golang.org/x/sync | "+oldSync+" | "+newSync+" |") {
		t.Errorf("Markdown lacks the diff row:\n%s", md)
	}
	data, err := r.CSV()
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(r.Components) || rows[0][0] != "name" || rows[2][0] != "golang.org/x/sync" || rows[2][3] != "BSD-3-Clause" || rows[2][8] != "app linux/amd64" {
		t.Errorf("CSV rows %q", rows)
	}
}

func TestCSVNeutralisesFormulas(t *testing.T) {
	r := &Review{Components: []Component{{Name: "=HYPERLINK(\"x\")", Version: "+1", Licence: "MIT", Verdict: VerdictAllowed}}}
	data, err := r.CSV()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `'=HYPERLINK`) || !strings.Contains(string(data), "'+1") {
		t.Errorf("CSV %s", data)
	}
}

func TestGateReportIsReadStrictly(t *testing.T) {
	for _, tc := range []struct{ name, report, want string }{
		{"empty", "", "empty"},
		{"unknown field", `{"passed":true,"findings":[],"extra":1}`, "unknown field"},
		{"unknown decision", `{"passed":false,"findings":[{"vulnerabilityID":"CVE-1","decision":"MAYBE"}]}`, `unknown decision "MAYBE"`},
		{"passed beside a blocking finding", `{"passed":true,"findings":[{"vulnerabilityID":"CVE-1","decision":"FAIL"}]}`, "blocks the release but the report says it passed"},
		{"trailing data", `{"passed":true}{}`, "trailing data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseGateReport([]byte(tc.report))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	// What the release pipeline writes (gate.json) reads back.
	rp := releasePolicy(t, "2027-01-31")
	rep, err := gate.ReadReport("../release/gate/testdata/reports/high-fixed.json")
	if err != nil {
		t.Fatal(err)
	}
	res := gate.Evaluate(rp, []gate.ScannedImage{{Image: "app linux/amd64", Report: rep}}, fixtureCreated)
	data, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseGateReport(data)
	if err != nil || !back.Passed || len(back.Findings) != 1 || back.Findings[0].Decision != gate.DecisionExcepted {
		t.Errorf("gate.json round trip: %+v %v", back, err)
	}
}

// approvedBefore is the approval date of an exception expiring on expires:
// 85 days before, within the default maximum lifetime.
func approvedBefore(t *testing.T, expires string) string {
	t.Helper()
	e, err := time.Parse(time.DateOnly, expires)
	if err != nil {
		t.Fatal(err)
	}
	return e.AddDate(0, 0, -85).Format(time.DateOnly)
}

package page

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/provenance"
	"github.com/reloader-dev/reloader/release/support"
)

func TestPageShowsDigestsVerifyCommandsAndSBOMLinks(t *testing.T) {
	d := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	l := &release.Lock{Schema: release.LockSchema, Version: "v1.2.3", Source: "https://github.com/reloader-dev/reloader",
		Commit: strings.Repeat("ab", 20), Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Signer: release.Signer{Identity: "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3", Issuer: "https://token.actions.githubusercontent.com"},
		Artifacts: []release.Artifact{
			{Kind: release.KindImageIndex, Name: "reloader", Repository: "ghcr.io/reloader-dev/reloader", Digest: d("1"), Size: 1, MediaType: "x"},
			{Kind: release.KindImage, Name: "reloader", Platform: "linux/arm/v7", Repository: "ghcr.io/reloader-dev/reloader", Digest: d("2"), Size: 1, MediaType: "x"},
			{Kind: release.KindSBOM, Name: "reloader", Platform: "linux/arm/v7", Repository: "ghcr.io/reloader-dev/reloader", Digest: d("3"), Size: 1, MediaType: "x",
				ArtifactType: "application/spdx+json", Subject: d("2")},
		}}
	md, html, err := Render(Build(l, Options{SBOMBaseURL: "https://dl.example/v1.2.3/", LockRef: "ghcr.io/reloader-dev/reloader-release:v1.2.3"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"cosign verify --new-bundle-format --trusted-root trusted_root.json --certificate-identity=https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3 --certificate-oidc-issuer=https://token.actions.githubusercontent.com ghcr.io/reloader-dev/reloader@" + d("2"),
		"[reloader-linux-arm-v7.spdx.json](https://dl.example/v1.2.3/reloader-linux-arm-v7.spdx.json)",
		"reloader-mirror verify --lock-ref ghcr.io/reloader-dev/reloader-release:v1.2.3",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(string(html), d("1")) || !strings.Contains(string(html), `href="https://dl.example/v1.2.3/reloader-linux-arm-v7.spdx.json"`) {
		t.Errorf("html lacks the index digest or the SBOM link:\n%s", html)
	}
	if strings.Contains(string(md), d("3")) {
		t.Error("the SBOM artifact is listed as a row; it belongs to its image")
	}
}

func TestPageSaysWhetherAndHowTheReleaseWasScanned(t *testing.T) {
	d := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	l := &release.Lock{Schema: release.LockSchema, Version: "v1.2.3", Source: "https://github.com/reloader-dev/reloader",
		Commit: strings.Repeat("ab", 20), Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Signer:    release.Signer{PublicKey: "PEM"},
		Artifacts: []release.Artifact{{Kind: release.KindImageIndex, Name: "reloader", Repository: "r/reloader", Digest: d("1"), Size: 1, MediaType: "x"}}}
	for _, scan := range []*release.Scan{nil, {Skipped: true}} {
		l.Scan = scan
		md, html, err := Render(Build(l, Options{}))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(md), "**UNSCANNED") || !strings.Contains(string(html), "UNSCANNED") {
			t.Errorf("scan %+v: the page does not say the release is unscanned:\n%s", scan, md)
		}
	}
	l.Scan = &release.Scan{Scanner: "trivy", ScannerVersion: "0.74.0", DBDigest: d("f"), DBBuilt: time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC),
		Counts:     map[string]int{"HIGH": 1, "LOW": 2},
		Exceptions: []release.ScanException{{ID: "CVE-2099-0001", Package: "golang.org/x/sync", Expires: "2027-01-31", Justification: "unreachable"}}}
	md, _, err := Render(Build(l, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Scanned by trivy 0.74.0, database " + d("f") + " built 2026-11-29 06:00 UTC", "HIGH 1", "LOW 2",
		"Exception CVE-2099-0001 in golang.org/x/sync until 2027-01-31"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the page lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "UNSCANNED") {
		t.Error("a scanned release is called unscanned")
	}
}

func TestPageShowsEachImagesProvenanceAndHowToVerifyIt(t *testing.T) {
	d := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	l := &release.Lock{Schema: release.LockSchema, Version: "v1.2.3", Source: "https://github.com/reloader-dev/reloader",
		Commit: strings.Repeat("ab", 20), Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Signer: release.Signer{PublicKey: "PEM"},
		Artifacts: []release.Artifact{{Kind: release.KindImage, Name: "reloader", Platform: "linux/amd64", Repository: "r/reloader", Digest: d("2"), Size: 1, MediaType: "x"}}}
	prov := map[string]provenance.Summary{d("2"): {Builder: provenance.LocalBuilder, Source: l.Source, Commit: l.Commit, GoVersion: "go1.26.8"}}
	md, html, err := Render(Build(l, Options{Provenance: prov}))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"built by reloader-release local from commit " + l.Commit + " with go1.26.8",
		"cosign verify-attestation --type slsaprovenance1 --key cosign.pub --insecure-ignore-tlog=true r/reloader@" + d("2"),
	} {
		if !strings.Contains(string(md), want) || !strings.Contains(string(html), want) {
			t.Errorf("the page lacks %q:\n%s", want, md)
		}
	}
}

func TestPageShowsSupportedVersionsAndPublishesTheAdvisoriesAffectingThem(t *testing.T) {
	d := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	l := &release.Lock{Schema: release.LockSchema, Version: "v1.0.1", Source: "https://github.com/reloader-dev/reloader",
		Commit: strings.Repeat("ab", 20), Created: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		Signer:    release.Signer{PublicKey: "PEM"},
		Artifacts: []release.Artifact{{Kind: release.KindImageIndex, Name: "reloader", Repository: "r/reloader", Digest: d("1"), Size: 1, MediaType: "x"}}}
	tab, err := support.ParseTable([]byte(`apiVersion: reloader.dev/support/v1
series:
  - {series: v0.9, released: "2026-01-01", endOfSupport: "2026-11-01"}
  - {series: v1.0, released: "2026-11-01", endOfSupport: "2027-11-01"}
  - {series: v1.1, released: "2026-11-20", endOfSupport: "2028-05-01"}
`))
	if err != nil {
		t.Fatal(err)
	}
	advisories, err := support.ReadAdvisories("../../release/support/testdata/advisories")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Write(dir, l, Options{Support: tab, Advisories: advisories, ReviewURL: "review/index.html"}); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "versions.md"))
	html, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	const osv = "advisories/RELOADER-2026-0001.json"
	for _, want := range []string{
		"| v1.1 | 2026-11-20 | 2028-05-01 | supported | none |",
		"| v1.0 (this release) | 2026-11-01 | 2027-11-01 | supported | [RELOADER-2026-0001](" + osv + ") |",
		"| v0.9 | 2026-01-01 | 2026-11-01 | END OF SUPPORT | [RELOADER-2026-0001](" + osv + ") |",
		"[RELOADER-2026-0001](" + osv + ") (GHSA-xxxx-xxxx-xxxx), 2026-11-20: Example: a Secret's hash", "**Affects this release.**",
		"[review/index.html](review/index.html)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("versions.md lacks %q:\n%s", want, md)
		}
	}
	for _, want := range []string{`<table id="support">`, `href="` + osv + `"`, "affected", `href="review/index.html"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	published, err := os.ReadFile(filepath.Join(dir, osv))
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile("../../release/support/testdata/advisories/RELOADER-2026-0001.json")
	if !bytes.Equal(published, orig) {
		t.Error("the published OSV file differs from the repository's")
	}
	if _, err := support.ParseAdvisory(published); err != nil {
		t.Errorf("the published OSV file does not parse: %v", err)
	}

	// v1.0.2 carries the fix: the advisory is listed, not against this release.
	l.Version = "v1.0.2"
	md2, _, err := Render(Build(l, Options{Support: tab, Advisories: advisories}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md2), "Affects this release") {
		t.Error("v1.0.2 is fixed but the page says the advisory affects it")
	}
	_, noneHTML, _ := Render(Build(l, Options{}))
	if !strings.Contains(string(noneHTML), "No security advisory has been published.") {
		t.Error("a page without advisories must say none has been published")
	}
}

// A disconnected user passes --trusted-root-sha256, and must get it from the
// publisher: the page (the release notes) publishes the trusted root a
// keyless release was verified against, and its sha256. The signer it names
// is to be checked against the documentation, not taken from the page.
func TestPageOfAKeylessReleasePublishesItsTrustedRootAndItsSHA256(t *testing.T) {
	keyless := &release.Lock{Schema: release.LockSchema, Version: "v1.2.3", Source: "https://github.com/reloader-dev/reloader",
		Commit: strings.Repeat("ab", 20), Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Signer: release.Signer{Identity: "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3", Issuer: "https://token.actions.githubusercontent.com"}}
	rootJSON := []byte(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`)
	dir := t.TempDir()
	if err := Write(dir, keyless, Options{LockRef: "ghcr.io/reloader-dev/reloader-release:v1.2.3", TrustedRootJSON: rootJSON}); err != nil {
		t.Fatal(err)
	}
	published, err := os.ReadFile(filepath.Join(dir, TrustedRootFile))
	if err != nil || !bytes.Equal(published, rootJSON) {
		t.Fatalf("published trusted root %q, %v; want the one the release was verified against", published, err)
	}
	want := sha256Hex(rootJSON)
	for _, f := range []string{"versions.md", "index.html"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{want, "--trusted-root-sha256 " + want, "against the project documentation (SECURITY.md), not against this page", "--expect-version v1.2.3"} {
			if !strings.Contains(string(b), s) {
				t.Errorf("%s lacks %q:\n%s", f, s, b)
			}
		}
	}
	// A key-signed release has no trusted root to publish, but its key is
	// checked against the documentation all the same.
	keyed := *keyless
	keyed.Signer = release.Signer{PublicKey: "-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n"}
	md, _, err := Render(Build(&keyed, Options{TrustedRootJSON: rootJSON}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(md), want) || !strings.Contains(string(md), "not against this page") {
		t.Errorf("key-signed page: publishes a trusted root or does not send the reader to the documentation:\n%s", md)
	}
}

func sha256Hex(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b)) }

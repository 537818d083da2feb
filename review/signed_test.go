package review

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/provenance"
)

// multiImage is f shipped as a real release ships: the same program in a
// second platform image and in a second variant, each with its own SBOMs.
func multiImage(t *testing.T, f *fixture) *fixture {
	t.Helper()
	g := withImage(t, f, "app", "standard", "linux/arm64", "2", f.sboms)
	return withImage(t, g, "app-ubi", "ubi", "linux/amd64", "3", f.sboms)
}

// withImage is f with one more platform image (and, for a new name, its
// index) whose SBOMs are the documents of sboms; digit makes its digest.
func withImage(t *testing.T, f *fixture, name, variant, platform, digit string, sboms []SBOM) *fixture {
	t.Helper()
	lock := *f.lock
	lock.Artifacts = slices.Clone(f.lock.Artifacts)
	g := &fixture{lock: &lock, sboms: slices.Clone(f.sboms)}
	a := f.lock.Find(release.KindImage, "app")[0]
	a.Name, a.Variant, a.Platform, a.Digest = name, variant, platform, "sha256:"+strings.Repeat(digit, 64)
	lock.Artifacts = append(lock.Artifacts, a)
	if len(f.lock.Find(release.KindImageIndex, name)) == 0 {
		ix := f.lock.Find(release.KindImageIndex, "app")[0]
		ix.Name, ix.Variant, ix.Digest = name, variant, "sha256:"+strings.Repeat(digit, 63)+"9"
		lock.Artifacts = append(lock.Artifacts, ix)
	}
	for _, s := range sboms {
		s.Artifact.Name, s.Artifact.Variant, s.Artifact.Platform, s.Artifact.Subject = a.Name, a.Variant, a.Platform, a.Digest
		lock.Artifacts = append(lock.Artifacts, s.Artifact)
		g.sboms = append(g.sboms, s)
	}
	if err := lock.Validate(); err != nil {
		t.Fatal(err)
	}
	return g
}

// A module linked into every platform's binary is one component, listed
// with the images and platforms that carry it, on the page, in the CSV and
// in review.json alike (a real two-platform release had 236 rows for about
// 60 components).
func TestEachComponentIsListedOnceWithTheImagesThatCarryIt(t *testing.T) {
	r := build(t, multiImage(t, releases(t)[newSync]), nil, nil)
	if r.Schema != Schema {
		t.Errorf("schema %q, want %q: review.json changed shape", r.Schema, Schema)
	}
	if len(r.Images) != 3 || len(r.Components) != 3 {
		t.Fatalf("%d images, %d components; want 3 images carrying the same 3 components", len(r.Images), len(r.Components))
	}
	want := []string{"app linux/amd64", "app linux/arm64", "app-ubi linux/amd64"}
	for _, c := range r.Components {
		if !slices.Equal(c.Labels(), want) {
			t.Errorf("%s is carried by %q, want %q", c.Name, c.Labels(), want)
		}
	}
	for _, img := range r.Images {
		if img.Components != 3 {
			t.Errorf("image %s %s counts %d components, want its 3", img.Name, img.Platform, img.Components)
		}
	}
	if len(r.LicenceFindings) != 1 || !slices.Equal(r.LicenceFindings[0].Images, want) {
		t.Errorf("licence findings %+v, want one naming the three images", r.LicenceFindings)
	}
	data, err := r.CSV()
	if err != nil {
		t.Fatal(err)
	}
	if rows := strings.Split(strings.TrimSpace(string(data)), "\n"); len(rows) != 4 || !strings.HasSuffix(rows[2], ",app linux/amd64; app linux/arm64; app-ubi linux/amd64") {
		t.Errorf("CSV:\n%s\nwant a header and one row per component naming its images", data)
	}
	md, err := r.Markdown(nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(md), "| golang.org/x/sync |"); n != 1 {
		t.Errorf("the Markdown lists golang.org/x/sync %d times, want once", n)
	}
	html, err := r.HTML(nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(html), `<tr data-images="app linux/amd64|app linux/arm64|app-ubi linux/amd64">`); n != 3 {
		t.Errorf("the page has %d component rows carried by all three images, want 3", n)
	}
}

// The review the pipeline signs must be the one a reviewer recomputes: it
// may not depend on the lock's order, on the signatures and attestations
// signed after it, on who verifies it, on a gate report or policy given
// beside it, or on the date.
func TestTheSignedReviewIsAFunctionOfTheReleaseAlone(t *testing.T) {
	f := multiImage(t, releases(t)[newSync])
	prov := map[string]provenance.Summary{}
	for _, a := range f.lock.Find(release.KindImageIndex, "") {
		prov[a.Digest] = provenance.Summary{Builder: "reloader-release local", Source: f.lock.Source, Commit: f.lock.Commit, GoVersion: "go1.26.8"}
	}
	atSigning := Input{Lock: f.lock, SBOMs: f.sboms, Licences: repoLicencePolicy(t), Provenance: prov, Now: time.Now()}
	signed, html := signedReview(t, atSigning)

	// The lock as a reviewer reads it: sorted, with every signature and
	// attestation listed, and read a year later with a gate report.
	later := *f.lock
	later.Artifacts = append([]release.Artifact(nil), f.lock.Artifacts...)
	for _, a := range f.lock.Find(release.KindImageIndex, "") {
		later.Artifacts = append(later.Artifacts, release.Artifact{Kind: release.KindSignature, Name: a.Name, Variant: a.Variant, Repository: a.Repository,
			Tag: "sha256-" + a.Digest[7:] + ".sig", Digest: "sha256:" + strings.Repeat("e", 64), Size: 1, MediaType: a.MediaType, Subject: a.Digest})
	}
	slices.Reverse(later.Artifacts)
	sboms := slices.Clone(f.sboms)
	slices.Reverse(sboms)
	rp := releasePolicy(t, "2027-01-31")
	atReview := Input{Lock: &later, SBOMs: sboms, Licences: repoLicencePolicy(t), Provenance: prov, Now: time.Now().AddDate(1, 0, 0),
		Identity: Identity{Signer: "someone", LockDigest: "sha256:" + strings.Repeat("f", 64), Verification: "by hand"},
		Gate:     gateResult(t, "clean.json", rp), ReleasePolicy: rp}
	recomputed, html2 := signedReview(t, atReview)
	if d, err := FirstDifference(signed, recomputed); err != nil || d != "" {
		t.Fatalf("the recomputed review differs from the signed one at %s (%v)", d, err)
	}
	if !bytes.Equal(html, html2) {
		t.Error("the page rendered from the recomputed review is not the signed page")
	}
	a, err := ParseAttestation(signed)
	if err != nil {
		t.Fatalf("the signed review does not parse back: %v", err)
	}
	if a.Review.Release.LockDigest != "" || a.Review.Release.Verification != SignedVerification || a.Review.Vulnerabilities.GateReport {
		t.Errorf("the signed review carries what differs between readers: %+v", a.Review.Release)
	}

	t.Run("one byte changed is named by its field", func(t *testing.T) {
		i := bytes.Index(signed, []byte(`"version":"`+newSync+`"`))
		if i < 0 {
			t.Fatal("no x/sync version in the signed review")
		}
		forged := slices.Clone(signed)
		forged[i+len(`"version":"v0.2`)] = '5'
		d, err := FirstDifference(forged, recomputed)
		if err != nil || !strings.HasPrefix(d, "review.components[1].version: signed \"v0.25.0\", recomputed \""+newSync+"\"") {
			t.Errorf("difference %q (%v), want the component's version named", d, err)
		}
	})
	t.Run("another licence policy is named as the difference", func(t *testing.T) {
		lp := repoLicencePolicy(t)
		lp.Allow = lp.Allow[1:]
		in := atSigning
		in.Licences = lp
		other, _ := signedReview(t, in)
		if d, _ := FirstDifference(signed, other); !strings.HasPrefix(d, "review.licencePolicy: ") {
			t.Errorf("difference %q, want the licence policy named first", d)
		}
	})
	t.Run("the page names no temporary path and says it is signed", func(t *testing.T) {
		for _, want := range []string{SignedVerification, `id="ssdf-map"`} {
			if !strings.Contains(string(html), want) {
				t.Errorf("the signed page lacks %q", want)
			}
		}
	})
}

func signedReview(t *testing.T, in Input) (predicate, html []byte) {
	t.Helper()
	r, err := BuildSigned(in)
	if err != nil {
		t.Fatal(err)
	}
	predicate, html, err = NewAttestation(r)
	if err != nil {
		t.Fatal(err)
	}
	return predicate, html
}

// The SSDF map claims a practice only with evidence this release carries,
// cites that evidence by digest, and says it is not the CISA attestation.
func TestTheSSDFMapListsOnlyPracticesThisReleaseCarriesEvidenceFor(t *testing.T) {
	f := releases(t)[newSync]
	ids := func(m SSDFMap) []string {
		var out []string
		for _, p := range m.Practices {
			out = append(out, p.ID)
			real := false
			for _, e := range p.Evidence {
				real = real || e.Kind != EvidenceTest
			}
			if !real {
				t.Errorf("%s cites only tests, no evidence of this release: %+v", p.ID, p.Evidence)
			}
		}
		return out
	}
	bare := build(t, f, nil, nil)
	if got, want := ids(bare.SSDF), []string{"PS.1", "PS.2", "PS.3", "PW.4"}; !slices.Equal(got, want) {
		t.Errorf("an unscanned release without provenance or chart maps %q, want %q", got, want)
	}
	if !strings.Contains(bare.SSDF.Notice, "not a legal attestation") || !strings.Contains(bare.SSDF.Notice, "signed by the software producer") {
		t.Errorf("notice %q", bare.SSDF.Notice)
	}

	lock := *f.lock
	lock.Artifacts = append(slices.Clone(f.lock.Artifacts), release.Artifact{Kind: release.KindChart, Name: "app", Repository: "registry.example/charts/app",
		Digest: "sha256:" + strings.Repeat("8", 64), Size: 1, MediaType: "application/vnd.oci.image.manifest.v1+json"})
	lock.Scan = &release.Scan{Scanner: "trivy", ScannerVersion: "0.74.0", DBDigest: "sha256:" + strings.Repeat("7", 64), Counts: map[string]int{"HIGH": 1},
		Exceptions: []release.ScanException{{ID: "CVE-2099-0001", Package: "golang.org/x/sync", Expires: "2027-01-31", Justification: "not reachable"}}}
	ix := f.lock.Find(release.KindImageIndex, "app")[0]
	full, err := BuildSigned(Input{Lock: &lock, SBOMs: f.sboms, Licences: repoLicencePolicy(t),
		Provenance: map[string]provenance.Summary{ix.Digest: {Builder: "reloader-release local", GoVersion: "go1.26.8"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(full.SSDF), []string{"PO.3", "PS.1", "PS.2", "PS.3", "PW.4", "PW.6", "PW.9", "RV.1", "RV.2"}; !slices.Equal(got, want) {
		t.Errorf("a scanned release with provenance and a chart maps %q, want %q", got, want)
	}
	js, _ := json.Marshal(full.SSDF)
	for _, want := range []string{ix.Digest, lock.Scan.DBDigest, f.sboms[0].Artifact.Digest, `"kind":"test","detail":"test/airgap TestAirGapDrill"`, PredicateType} {
		if !strings.Contains(string(js), want) {
			t.Errorf("the map does not cite %s:\n%s", want, js)
		}
	}
}

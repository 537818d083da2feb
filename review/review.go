// Package review turns a verified release into a procurement review: what
// is inside each image (components with version, PURL, licence, supplier
// and where they were found), how the licences fare against a licence
// policy, whether each SBOM carries the NTIA minimum elements, which
// vulnerabilities the release gate saw and which it accepted and why, and
// what changed since a previous release.
//
// Everything here is a pure function of its inputs (the verified lock, the
// SBOM documents, the gate's result and the policies); reading a release
// from an archive or a registry and verifying it is the caller's job.
package review

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/release/provenance"
)

// Schema identifies the form of review.json. v2 lists each component once
// with the images that carry it (v1, unversioned, had one row per image and
// component) and adds the SSDF map.
const Schema = "https://reloader.dev/schemas/review/v2"

// Component is one package of the release, listed once however many images
// and platforms carry it.
type Component struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	PURL    string `json:"purl,omitempty"`
	CPE     string `json:"-"`
	// LicenceDeclared is the licence as the SBOM states it.
	LicenceDeclared string `json:"licenceDeclared,omitempty"`
	// Licence is LicenceDeclared normalised to SPDX, or NOASSERTION.
	Licence string  `json:"licence"`
	Verdict Verdict `json:"licenceVerdict"`
	// Supplier is "Organization: X" or "Person: Y"; empty when unknown.
	Supplier string `json:"supplier,omitempty"`
	// Source is where it was found: "Go module in /reloader", "RPM in
	// /var/lib/rpm/rpmdb.sqlite".
	Source string `json:"source"`
	// In are the images that carry it, in image and platform order.
	In []Carrier `json:"in,omitempty"`
}

// Carrier is one platform image that ships a component.
type Carrier struct {
	Image    string `json:"image"`
	Variant  string `json:"variant,omitempty"`
	Platform string `json:"platform"`
}

// Label names the image and platform as the page's image filter does.
func (c Carrier) Label() string { return c.Image + " " + c.Platform }

// Labels are the carriers' labels, for the page's image filter.
func (c Component) Labels() []string {
	out := make([]string, len(c.In))
	for i, k := range c.In {
		out[i] = k.Label()
	}
	return out
}

// SBOM is one SBOM document of a verified release.
type SBOM struct {
	// Artifact is the lock's entry for the SBOM (kind sbom): its Name,
	// Variant, Platform, Subject (the image digest) and ArtifactType.
	Artifact release.Artifact
	Data     []byte
}

// Identity is who made the release and what was verified.
type Identity struct {
	Version string    `json:"version"`
	Commit  string    `json:"commit"`
	Source  string    `json:"source"`
	Created time.Time `json:"created"`
	// Signer describes the trusted signer ("public key sha256:…").
	Signer string `json:"signer"`
	// LockDigest is the sha256 of the verified lock bytes.
	LockDigest string `json:"lockDigest"`
	// Verification is the verifier's verdict, e.g. "lock and 24 signed
	// artifacts verified offline".
	Verification string `json:"verification"`
	// TimeSource is what the keyless certificate's validity was judged
	// at: "rfc3161-timestamp", "tlog-integrated-time", or both joined by
	// "+" (trust.LockResult.TimeSource); empty for a key.
	TimeSource string `json:"timeSource,omitempty"`
}

// Image is one platform image of a variant and what its SBOMs say.
type Image struct {
	Name       string      `json:"name"`
	Variant    string      `json:"variant"`
	Platform   string      `json:"platform"`
	Digest     string      `json:"digest"`
	Components int         `json:"components"`
	SBOMs      []SBOMCheck `json:"sboms"`
}

// SBOMCheck is the minimum-elements verdict of one profile on one SBOM
// document.
type SBOMCheck struct {
	Image    string           `json:"image"`
	Platform string           `json:"platform"`
	Format   string           `json:"format"`
	Digest   string           `json:"digest"`
	Profile  Profile          `json:"profile"`
	Missing  []MissingElement `json:"missing"`
	// URI is the SBOM's own address: its digest reference in the registry
	// the release was published to.
	URI string `json:"uri,omitempty"`
	// NotChecked says why the profile was not checked on this document
	// (a format the profile does not allow); empty when it was.
	NotChecked string `json:"notChecked,omitempty"`
}

// LicenceCount is one licence of the summary.
type LicenceCount struct {
	Licence string  `json:"licence"`
	Verdict Verdict `json:"verdict"`
	// Components counts distinct name@version pairs across images.
	Components int `json:"components"`
}

// LicenceFinding is a component whose licence needs attention.
type LicenceFinding struct {
	Name    string   `json:"name"`
	Version string   `json:"version"`
	Licence string   `json:"licence"`
	Verdict Verdict  `json:"verdict"`
	Images  []string `json:"images"`
}

// Exception is an accepted vulnerability as the release policy states it.
type Exception struct {
	ID            string `json:"id"`
	Package       string `json:"package"`
	Justification string `json:"justification"`
	Expires       string `json:"expires"`
	Expired       bool   `json:"expired"`
	// Kind is gate.KindAcceptedRisk or gate.KindNotAffected; with the
	// latter VEXJustification is its OpenVEX justification.
	Kind             gate.ExceptionKind `json:"kind"`
	VEXJustification string             `json:"vexJustification,omitempty"`
	// Source is where the review read it: ExceptionFromLock (applied by the
	// release gate and signed with the lock) or ExceptionFromPolicy (a
	// release policy file given to the review, not signed).
	Source string `json:"source"`
}

// Where an exception was read.
const (
	ExceptionFromLock   = "signed lock"
	ExceptionFromPolicy = "release policy"
)

// ScanRecord is the vulnerability scan as the signed lock records it.
type ScanRecord struct {
	// Skipped: the release was made with --no-scan, and the lock says so.
	Skipped        bool      `json:"skipped,omitempty"`
	Scanner        string    `json:"scanner,omitempty"`
	ScannerVersion string    `json:"scannerVersion,omitempty"`
	DBDigest       string    `json:"dbDigest,omitempty"`
	DBBuilt        time.Time `json:"dbBuilt,omitzero"`
	// Counts are the findings by severity over all images, most severe first.
	Counts []SeverityCount `json:"counts,omitempty"`
}

// SeverityCount is the number of findings of one severity.
type SeverityCount struct {
	Severity string `json:"severity"`
	Count    int    `json:"count"`
}

// Vulnerabilities is what the release gate found and accepted.
type Vulnerabilities struct {
	// Scan is the lock's signed record of the scan; nil when the lock has
	// none (a release made before locks recorded scans).
	Scan *ScanRecord `json:"scan,omitempty"`
	// GateReport says whether the gate's full result (gate.json, with
	// every finding) was given; it is optional when the lock records the
	// scan.
	GateReport bool           `json:"gateReport"`
	Passed     bool           `json:"passed"`
	Findings   []gate.Finding `json:"findings"`
	Exceptions []Exception    `json:"exceptions"`
}

// Scanned reports whether anything says the images were scanned: the
// lock's record of a scan that ran, or a gate report.
func (v Vulnerabilities) Scanned() bool {
	return v.GateReport || (v.Scan != nil && !v.Scan.Skipped)
}

// Status is the gate's verdict in one word or phrase for the reviewer.
func (v Vulnerabilities) Status() string {
	switch {
	case v.Scanned() && v.Passed:
		return "passed"
	case v.Scanned():
		return "failed"
	case v.Scan != nil:
		return "scan skipped"
	}
	return "no scan on record"
}

// Review is the whole procurement review of one release.
type Review struct {
	Schema  string   `json:"schema"`
	Release Identity `json:"release"`
	// LicencePolicy is the sha256 of the licence policy the verdicts come
	// from (its JSON form), so two reviews with different verdicts say why.
	LicencePolicy   string           `json:"licencePolicy"`
	Images          []Image          `json:"images"`
	Components      []Component      `json:"components"`
	Licences        []LicenceCount   `json:"licences"`
	LicenceFindings []LicenceFinding `json:"licenceFindings"`
	MinimumElements []SBOMCheck      `json:"minimumElements"`
	Vulnerabilities Vulnerabilities  `json:"vulnerabilities"`
	// VEXStatements are the release's VEX statements with their dates,
	// CSAF the CSAF documents it publishes (vexdocs.go).
	VEXStatements []VEXStatement `json:"vexStatements"`
	CSAF          []CSAFDocument `json:"csaf"`
	// SSDF maps the release's evidence to NIST SP 800-218 practices.
	SSDF SSDFMap `json:"ssdf"`
	// CRA maps it to the Cyber Resilience Act's Annex I Part II.
	CRA CRAMap `json:"cra"`
	// SecurityContact and SecurityTxt are the producer's security contact
	// and security.txt URL as the SBOMs name them (the first that does).
	SecurityContact string `json:"securityContact,omitempty"`
	SecurityTxt     string `json:"securityTxt,omitempty"`
	// Diff is set when the review compares against a previous release.
	Diff *Diff `json:"diff,omitempty"`

	// Profile is the minimum elements the SBOMs were checked against.
	Profile Profile `json:"profile"`
}

// Input is everything a review is made from. Lock must be verified.
type Input struct {
	Lock     *release.Lock
	Identity Identity
	SBOMs    []SBOM
	// Gate is the release gate's full result (gate.json); optional, since
	// the lock records the scan. When given it must agree with the lock.
	Gate *gate.Result
	// ReleasePolicy supplies the exceptions; nil when not given.
	ReleasePolicy *gate.Policy
	Licences      *LicencePolicy
	// Profile is the minimum elements every SBOM is checked against;
	// empty is DefaultProfile.
	Profile Profile
	// Now judges exception expiry.
	Now time.Time
	// Provenance is each image's and index's verified SLSA provenance, by
	// digest; the SSDF map cites it.
	Provenance map[string]provenance.Summary
	// Signed: this review is (to be) attested on each image index.
	Signed bool
}

// licencePolicyDigest is the sha256 of the policy's JSON form, as parsed
// (normalised): what the verdicts were judged by, whatever file it came from.
func licencePolicyDigest(p *LicencePolicy) string {
	data, err := json.Marshal(p)
	if err != nil {
		return "unencodable"
	}
	return fmt.Sprintf("sha256:%x", sha256.Sum256(data))
}

func (r *Review) summariseLicences() {
	type key struct{ licence, name, version string }
	seen := map[key]bool{}
	counts := map[string]*LicenceCount{}
	findings := map[string]*LicenceFinding{}
	for _, c := range r.Components {
		k := key{c.Licence, c.Name, c.Version}
		if !seen[k] {
			seen[k] = true
			lc := counts[c.Licence]
			if lc == nil {
				lc = &LicenceCount{Licence: c.Licence, Verdict: c.Verdict}
				counts[c.Licence] = lc
			}
			lc.Components++
		}
		if c.Verdict.Finding() {
			fk := c.Name + "@" + c.Version
			f := findings[fk]
			if f == nil {
				f = &LicenceFinding{Name: c.Name, Version: c.Version, Licence: c.Licence, Verdict: c.Verdict}
				findings[fk] = f
			}
			f.Images = append(f.Images, c.Labels()...)
		}
	}
	for _, k := range sortedKeys(counts) {
		r.Licences = append(r.Licences, *counts[k])
	}
	sort.SliceStable(r.Licences, func(i, j int) bool { return r.Licences[i].Components > r.Licences[j].Components })
	for _, k := range sortedKeys(findings) {
		f := findings[k]
		sort.Strings(f.Images)
		f.Images = slices.Compact(f.Images)
		r.LicenceFindings = append(r.LicenceFindings, *f)
	}
}

// severityOrder ranks the scanner's severities, most severe first.
var severityOrder = map[string]int{
	string(gate.SeverityCritical): 0, string(gate.SeverityHigh): 1, string(gate.SeverityMedium): 2,
	string(gate.SeverityLow): 3, string(gate.SeverityUnknown): 4,
}

// vulnerabilities reads the scan from the signed lock first: its scanner,
// database, counts and applied exceptions are what the release was signed
// with. A gate report adds the individual findings, and a release policy
// the exceptions it holds beyond those; neither may contradict the lock.
func vulnerabilities(in Input) (Vulnerabilities, error) {
	v := Vulnerabilities{Findings: []gate.Finding{}, Exceptions: []Exception{}}
	seen := map[string]bool{}
	if sc := in.Lock.Scan; sc != nil {
		rec := &ScanRecord{Skipped: sc.Skipped, Scanner: sc.Scanner, ScannerVersion: sc.ScannerVersion, DBDigest: sc.DBDigest, DBBuilt: sc.DBBuilt.UTC()}
		for sev, n := range sc.Counts {
			rec.Counts = append(rec.Counts, SeverityCount{Severity: sev, Count: n})
		}
		sort.Slice(rec.Counts, func(i, j int) bool {
			a, b := rec.Counts[i].Severity, rec.Counts[j].Severity
			ra, oka := severityOrder[a]
			rb, okb := severityOrder[b]
			if oka != okb {
				return oka
			}
			if ra != rb {
				return ra < rb
			}
			return a < b
		})
		v.Scan = rec
		// The pipeline records a scan in the lock only when the gate passed.
		v.Passed = !sc.Skipped
		for _, e := range sc.Exceptions {
			expires, err := time.Parse(time.DateOnly, e.Expires)
			if err != nil {
				return v, fmt.Errorf("the lock's scan exception %s in %s: expiry %q is not a date (YYYY-MM-DD)", e.ID, e.Package, e.Expires)
			}
			v.Exceptions = append(v.Exceptions, Exception{ID: e.ID, Package: e.Package, Justification: strings.TrimSpace(e.Justification),
				Expires: e.Expires, Expired: !in.Now.Before(expires), Source: ExceptionFromLock,
				Kind: lockExceptionKind(e), VEXJustification: e.VEXJustification})
			seen[e.ID+"|"+e.Package] = true
		}
	}
	if in.Gate != nil {
		if err := gateMatchesLock(in.Gate, in.Lock.Scan); err != nil {
			return v, err
		}
		v.GateReport, v.Passed = true, in.Gate.Passed
		v.Findings = append(v.Findings, in.Gate.Findings...)
	}
	if in.ReleasePolicy != nil {
		for _, e := range in.ReleasePolicy.Exceptions {
			if seen[e.ID+"|"+e.Package] {
				continue
			}
			v.Exceptions = append(v.Exceptions, Exception{ID: e.ID, Package: e.Package, Justification: strings.TrimSpace(e.Justification),
				Expires: e.Expires.Format(time.DateOnly), Expired: e.Expired(in.Now), Source: ExceptionFromPolicy,
				Kind: e.EffectiveKind(), VEXJustification: e.VEXJustification})
		}
	}
	return v, nil
}

// gateMatchesLock refuses a gate report that is not the one the lock
// records: a loose file must not tell the reviewer a different story from
// what was signed.
func gateMatchesLock(g *gate.Result, sc *release.Scan) error {
	if sc == nil {
		return nil
	}
	if sc.Skipped {
		return errors.New("a gate report was given, but the signed lock says the release was made without a scan")
	}
	if !g.Passed {
		return errors.New("the gate report says the gate failed, but the signed lock records a scan that passed")
	}
	sevs := map[string]bool{}
	for s := range sc.Counts {
		sevs[s] = true
	}
	for s := range g.Counts {
		sevs[string(s)] = true
	}
	for _, s := range sortedKeys(sevs) {
		if got, want := g.Counts[gate.Severity(s)], sc.Counts[s]; got != want {
			return fmt.Errorf("the gate report counts %d %s findings, the signed lock %d: the report is not this release's", got, s, want)
		}
	}
	return nil
}

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
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/reloader-dev/reloader/policy"
	"github.com/reloader-dev/reloader/release"
)

// Component is one package found in one image's SBOM.
type Component struct {
	// Image, Variant and Platform say where the component ships.
	Image    string `json:"image,omitempty"`
	Variant  string `json:"variant,omitempty"`
	Platform string `json:"platform,omitempty"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	PURL     string `json:"purl,omitempty"`
	CPE      string `json:"-"`
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

// SBOMCheck is the NTIA minimum-elements verdict on one SBOM document.
type SBOMCheck struct {
	Image    string           `json:"image"`
	Platform string           `json:"platform"`
	Format   string           `json:"format"`
	Digest   string           `json:"digest"`
	Missing  []MissingElement `json:"missing"`
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
}

// Vulnerabilities is what the release gate found and accepted.
type Vulnerabilities struct {
	// GateReport says whether the gate's result was available at all: a
	// release made without a scanner has none, and the review says so.
	GateReport bool             `json:"gateReport"`
	Passed     bool             `json:"passed"`
	Findings   []policy.Finding `json:"findings"`
	Exceptions []Exception      `json:"exceptions"`
}

// Review is the whole procurement review of one release.
type Review struct {
	Release         Identity         `json:"release"`
	Images          []Image          `json:"images"`
	Components      []Component      `json:"components"`
	Licences        []LicenceCount   `json:"licences"`
	LicenceFindings []LicenceFinding `json:"licenceFindings"`
	MinimumElements []SBOMCheck      `json:"minimumElements"`
	Vulnerabilities Vulnerabilities  `json:"vulnerabilities"`
	// Diff is set when the review compares against a previous release.
	Diff *Diff `json:"diff,omitempty"`
}

// Input is everything a review is made from. Lock must be verified.
type Input struct {
	Lock     *release.Lock
	Identity Identity
	SBOMs    []SBOM
	// Gate is the release gate's result; nil when there is none.
	Gate *policy.Result
	// ReleasePolicy supplies the exceptions; nil when not given.
	ReleasePolicy *policy.Policy
	Licences      *LicencePolicy
	// Now judges exception expiry.
	Now time.Time
}

// Build makes the review. Every image of the lock must have its SBOMs: an
// image the review cannot see inside is an error, not an empty list.
func Build(in Input) (*Review, error) {
	if in.Lock == nil {
		return nil, errors.New("building the review: no release lock")
	}
	if in.Licences == nil {
		return nil, errors.New("building the review: no licence policy")
	}
	r := &Review{Release: in.Identity}
	r.Release.Version, r.Release.Commit, r.Release.Source, r.Release.Created = in.Lock.Version, in.Lock.Commit, in.Lock.Source, in.Lock.Created.UTC()
	bySubject := map[string][]SBOM{}
	for _, s := range in.SBOMs {
		bySubject[s.Artifact.Subject] = append(bySubject[s.Artifact.Subject], s)
	}
	for _, a := range in.Lock.Artifacts {
		if a.Kind != release.KindImage {
			continue
		}
		img := Image{Name: a.Name, Variant: a.Variant, Platform: a.Platform, Digest: a.Digest}
		docs := bySubject[a.Digest]
		if len(docs) == 0 {
			return nil, fmt.Errorf("building the review: image %s %s (%s) has no SBOM", a.Name, a.Platform, a.Digest)
		}
		// The SPDX document supplies the component list when present; every
		// document is checked for the minimum elements.
		sort.SliceStable(docs, func(i, j int) bool {
			return docs[i].Artifact.ArtifactType == MediaTypeSPDX && docs[j].Artifact.ArtifactType != MediaTypeSPDX
		})
		for i, s := range docs {
			what := fmt.Sprintf("%s %s (%s)", a.Name, a.Platform, s.Artifact.Digest)
			d, err := ParseSBOM(s.Artifact.ArtifactType, s.Data, what)
			if err != nil {
				return nil, fmt.Errorf("building the review: %w", err)
			}
			img.SBOMs = append(img.SBOMs, SBOMCheck{Image: a.Name, Platform: a.Platform, Format: d.Format, Digest: s.Artifact.Digest, Missing: d.Missing})
			if i > 0 {
				continue
			}
			for _, c := range d.Components {
				c.Image, c.Variant, c.Platform = a.Name, a.Variant, a.Platform
				c.Licence, c.Verdict = in.Licences.Judge(c.LicenceDeclared)
				r.Components = append(r.Components, c)
				img.Components++
			}
		}
		r.MinimumElements = append(r.MinimumElements, img.SBOMs...)
		r.Images = append(r.Images, img)
	}
	if len(r.Images) == 0 {
		return nil, errors.New("building the review: the release lists no images")
	}
	sort.SliceStable(r.Images, func(i, j int) bool {
		a, b := r.Images[i], r.Images[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Platform < b.Platform
	})
	sort.SliceStable(r.Components, func(i, j int) bool {
		a, b := r.Components[i], r.Components[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Image != b.Image {
			return a.Image < b.Image
		}
		return a.Platform < b.Platform
	})
	r.summariseLicences()
	r.Vulnerabilities = vulnerabilities(in)
	return r, nil
}

// imageLabel names an image and platform in findings.
func imageLabel(c Component) string { return c.Image + " " + c.Platform }

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
			f.Images = append(f.Images, imageLabel(c))
		}
	}
	for _, k := range sortedKeys(counts) {
		r.Licences = append(r.Licences, *counts[k])
	}
	sort.SliceStable(r.Licences, func(i, j int) bool { return r.Licences[i].Components > r.Licences[j].Components })
	for _, k := range sortedKeys(findings) {
		r.LicenceFindings = append(r.LicenceFindings, *findings[k])
	}
}

func vulnerabilities(in Input) Vulnerabilities {
	v := Vulnerabilities{Findings: []policy.Finding{}, Exceptions: []Exception{}}
	if in.Gate != nil {
		v.GateReport, v.Passed = true, in.Gate.Passed
		v.Findings = append(v.Findings, in.Gate.Findings...)
	}
	if in.ReleasePolicy != nil {
		for _, e := range in.ReleasePolicy.Exceptions {
			v.Exceptions = append(v.Exceptions, Exception{ID: e.ID, Package: e.Package, Justification: strings.TrimSpace(e.Justification),
				Expires: e.Expires.Format(time.DateOnly), Expired: e.Expired(in.Now)})
		}
	}
	return v
}

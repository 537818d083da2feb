package review

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/reloader-dev/reloader/release"
)

// Build makes the review. Every image of the lock must have its SBOMs: an
// image the review cannot see inside is an error, not an empty list.
func Build(in Input) (*Review, error) {
	if in.Lock == nil {
		return nil, errors.New("building the review: no release lock")
	}
	if in.Licences == nil {
		return nil, errors.New("building the review: no licence policy")
	}
	if in.Profile == "" {
		in.Profile = DefaultProfile
	}
	r := &Review{Schema: Schema, Release: in.Identity, LicencePolicy: licencePolicyDigest(in.Licences), Profile: in.Profile}
	r.Release.Version, r.Release.Commit, r.Release.Source, r.Release.Created = in.Lock.Version, in.Lock.Commit, in.Lock.Source, in.Lock.Created.UTC()
	bySubject := map[string][]SBOM{}
	for _, s := range in.SBOMs {
		bySubject[s.Artifact.Subject] = append(bySubject[s.Artifact.Subject], s)
	}
	byKey := map[componentKey]int{}
	for _, a := range in.Lock.Artifacts {
		if a.Kind != release.KindImage {
			continue
		}
		if err := r.addImage(a, bySubject[a.Digest], in, byKey); err != nil {
			return nil, err
		}
	}
	if len(r.Images) == 0 {
		return nil, errors.New("building the review: the release lists no images")
	}
	r.sortByContent()
	r.summariseLicences()
	v, err := vulnerabilities(in)
	if err != nil {
		return nil, fmt.Errorf("building the review: %w", err)
	}
	r.Vulnerabilities = v
	r.VEXStatements = vexStatements(in.Lock, v)
	if r.CSAF, err = csafDocuments(in.Lock, r.VEXStatements); err != nil {
		return nil, fmt.Errorf("building the review: %w", err)
	}
	r.SSDF = ssdfMap(in, r)
	r.CRA = craMap(in, r)
	return r, nil
}

// componentKey is what makes two SBOM entries one component.
type componentKey struct{ name, version, purl, declared, supplier, source string }

// addImage checks every SBOM of image a for the minimum elements and takes
// its components from the first (SPDX when present). A module linked into
// every platform's binary is one component carried by each image, not one
// row per image.
func (r *Review) addImage(a release.Artifact, docs []SBOM, in Input, byKey map[componentKey]int) error {
	img := Image{Name: a.Name, Variant: a.Variant, Platform: a.Platform, Digest: a.Digest}
	if len(docs) == 0 {
		return fmt.Errorf("building the review: image %s %s (%s) has no SBOM", a.Name, a.Platform, a.Digest)
	}
	// Ordered by content, not by the lock's order, which differs between
	// the pipeline (before signing) and the signed lock.
	sort.SliceStable(docs, func(i, j int) bool {
		if si, sj := docs[i].Artifact.ArtifactType == MediaTypeSPDX, docs[j].Artifact.ArtifactType == MediaTypeSPDX; si != sj {
			return si
		}
		return docs[i].Artifact.Digest < docs[j].Artifact.Digest
	})
	checked := false
	for i, s := range docs {
		what := fmt.Sprintf("%s %s (%s)", a.Name, a.Platform, s.Artifact.Digest)
		d, err := ParseSBOM(s.Artifact.ArtifactType, s.Data, what)
		if err != nil {
			return fmt.Errorf("building the review: %w", err)
		}
		check := SBOMCheck{Image: a.Name, Platform: a.Platform, Format: d.Format, Digest: s.Artifact.Digest, Profile: in.Profile, Missing: []MissingElement{}}
		if s.Artifact.Repository != "" {
			check.URI = s.Artifact.Repository + "@" + s.Artifact.Digest
		}
		if ok, why := formatChecked(in.Profile, d.Format); ok {
			check.Missing = d.Check(in.Profile)
			checked = true
		} else {
			check.NotChecked = why
		}
		img.SBOMs = append(img.SBOMs, check)
		if r.SecurityContact == "" {
			r.SecurityContact = d.securityContact
		}
		if r.SecurityTxt == "" {
			r.SecurityTxt = d.securityTxt
		}
		if i > 0 {
			continue
		}
		for _, c := range d.Components {
			k := componentKey{c.Name, c.Version, c.PURL, c.LicenceDeclared, c.Supplier, c.Source}
			at, ok := byKey[k]
			if !ok {
				c.Licence, c.Verdict = in.Licences.JudgeComponent(c)
				at = len(r.Components)
				byKey[k] = at
				r.Components = append(r.Components, c)
			}
			r.Components[at].In = append(r.Components[at].In, Carrier{Image: a.Name, Variant: a.Variant, Platform: a.Platform})
			img.Components++
		}
	}
	if !checked {
		// No document the profile may be checked on: each fails for it.
		for i := range img.SBOMs {
			img.SBOMs[i].Missing = append(img.SBOMs[i].Missing, formatElement())
		}
	}
	r.MinimumElements = append(r.MinimumElements, img.SBOMs...)
	r.Images = append(r.Images, img)
	return nil
}

// sortByContent orders images, checks, components and their carriers by
// what they are, so the review of one release is the same bytes whoever
// makes it (the signed review depends on it).
func (r *Review) sortByContent() {
	sort.SliceStable(r.Images, func(i, j int) bool {
		a, b := r.Images[i], r.Images[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Platform < b.Platform
	})
	sort.SliceStable(r.MinimumElements, func(i, j int) bool {
		a, b := r.MinimumElements[i], r.MinimumElements[j]
		if a.Image != b.Image {
			return a.Image < b.Image
		}
		if a.Platform != b.Platform {
			return a.Platform < b.Platform
		}
		return a.Format < b.Format
	})
	for i := range r.Components {
		in := r.Components[i].In
		sort.SliceStable(in, func(i, j int) bool { return in[i].Label() < in[j].Label() })
		// Twice in one image (two binaries linking it) is one carrier.
		r.Components[i].In = slices.Compact(in)
	}
	sort.SliceStable(r.Components, func(i, j int) bool {
		a, b := r.Components[i], r.Components[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		if a.PURL != b.PURL {
			return a.PURL < b.PURL
		}
		return strings.Join(a.Labels(), ",") < strings.Join(b.Labels(), ",")
	})
}

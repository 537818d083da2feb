package admission

import (
	"fmt"
	"strings"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/provenance"
)

// FromLock fills Options.Version, Repositories, SBOMPredicateType,
// ProvenancePredicateType, Pins and the approved Digests (see Approve) from a
// verified release lock: the repositories its image indexes were mirrored to
// (target maps a lock repository to its place at the target) and the
// predicate type of the SPDX SBOM attested on every index, the digest a
// digest-pinned install names. A release without that attestation is refused:
// a policy requiring one would admit nothing.
func (o *Options) FromLock(l *release.Lock, target func(repository string) string) error {
	indexes := l.Find(release.KindImageIndex, "")
	if len(indexes) == 0 {
		return fmt.Errorf("release %s lists no image index", l.Version)
	}
	o.Version = l.Version
	o.Repositories = nil
	o.Digests, o.Approved = nil, nil
	o.Approve(l)
	o.Pins = pinsOf(l, target)
	predicate, prov := "", ""
	for i, idx := range indexes {
		o.Repositories = append(o.Repositories, target(idx.Repository))
		// Provenance is required only when every index carries it.
		if p := provenanceAttestedOn(l, idx); i == 0 {
			prov = p
		} else if p != prov {
			prov = ""
		}
		found := spdxAttestedOn(l, idx)
		if found == "" {
			return fmt.Errorf("release %s: image %s@%s has no SPDX SBOM attestation in the lock: a policy requiring one would admit nothing", l.Version, idx.Repository, idx.Digest)
		}
		if predicate != "" && predicate != found {
			return fmt.Errorf("release %s: SBOM attestations use predicate types %s and %s", l.Version, predicate, found)
		}
		predicate = found
	}
	o.SBOMPredicateType = predicate
	o.ProvenancePredicateType = prov
	return nil
}

// spdxAttestedOn returns the SPDX predicate type attested on idx, or "".
// A Sigstore bundle attestation names its predicate type in the lock. A
// cosign .att manifest (key-signed releases) holds every attestation of its
// subject in one entry without a predicate type; the pipeline puts the SBOMs
// of an index's platform images in it, so their predicate type is the one.
func spdxAttestedOn(l *release.Lock, idx release.Artifact) string {
	platformSBOM := ""
	platforms := map[string]bool{}
	for _, a := range l.Artifacts {
		if a.Kind == release.KindImage && a.Name == idx.Name && a.Variant == idx.Variant {
			platforms[a.Digest] = true
		}
	}
	att := false
	for _, a := range l.Artifacts {
		// SPDX 2's predicate, not SPDX 3's (https://spdx.dev/Document/v3),
		// which a release attests beside it: the policy names the one
		// `cosign verify-attestation --type spdxjson` checks, whatever the
		// order of the lock.
		spdx := strings.HasPrefix(a.PredicateType, "https://spdx.dev/") && !strings.HasPrefix(a.PredicateType, "https://spdx.dev/Document/v3")
		switch {
		case a.Subject == idx.Digest && spdx && (a.Kind == release.KindAttestation || a.Kind == release.KindSBOM):
			return a.PredicateType
		case a.Subject == idx.Digest && a.Kind == release.KindAttestation && a.PredicateType == "":
			att = true
		case a.Kind == release.KindSBOM && spdx && platforms[a.Subject]:
			platformSBOM = a.PredicateType
		}
	}
	if att {
		return platformSBOM
	}
	return ""
}

// provenanceAttestedOn returns the SLSA provenance predicate type attested on
// idx, or "". A Sigstore bundle attestation names it in the lock; a cosign
// .att manifest (key-signed releases) carries the pipeline's provenance of
// the index among its layers, which the release's verification checked.
func provenanceAttestedOn(l *release.Lock, idx release.Artifact) string {
	for _, a := range l.Artifacts {
		if a.Subject != idx.Digest || a.Kind != release.KindAttestation {
			continue
		}
		if a.PredicateType == provenance.PredicateType || (a.PredicateType == "" && a.ArtifactType == "") {
			return provenance.PredicateType
		}
	}
	return ""
}

// pinsOf maps every reference that names one of the release's images
// without its mirrored digest to the image pinned at the mirror: the
// upstream repository by the release's tag, by digest (index or platform
// image) or both, and the mirror's repository by the release's tag.
func pinsOf(l *release.Lock, target func(repository string) string) map[string]string {
	pins := map[string]string{}
	for _, a := range l.Artifacts {
		if a.Kind != release.KindImageIndex && a.Kind != release.KindImage {
			continue
		}
		up, at := a.Repository, target(a.Repository)
		pinned := at + "@" + a.Digest
		if up != at {
			pins[up+"@"+a.Digest] = pinned
		}
		if a.Kind != release.KindImageIndex {
			continue
		}
		tag := a.Tag
		if tag == "" {
			tag = l.Version
		}
		pins[at+":"+tag] = pinned
		if up != at {
			pins[up+":"+tag] = pinned
			pins[up+":"+tag+"@"+a.Digest] = pinned
		}
	}
	return pins
}

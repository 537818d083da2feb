package admission

import (
	"fmt"
	"strings"

	"github.com/reloader-dev/reloader/release"
)

// FromLock fills Options.Version, Repositories, SBOMPredicateType and the
// approved Digests (see Approve) from a
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
	predicate := ""
	for _, idx := range indexes {
		o.Repositories = append(o.Repositories, target(idx.Repository))
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
		spdx := strings.HasPrefix(a.PredicateType, "https://spdx.dev/")
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

package admission

import (
	"fmt"
	"strings"

	"github.com/reloader-dev/reloader/release"
)

// FromLock fills Options.Version, Repositories and SBOMPredicateType from a
// verified release lock: the repositories its image indexes were mirrored to
// (target maps a lock repository to its place at the target) and the
// predicate type of the SPDX SBOM attested on every index. A release without
// that attestation is refused: a policy requiring it would admit nothing.
func (o *Options) FromLock(l *release.Lock, target func(repository string) string) error {
	indexes := l.Find(release.KindImageIndex, "")
	if len(indexes) == 0 {
		return fmt.Errorf("release %s lists no image index", l.Version)
	}
	o.Version = l.Version
	o.Repositories = nil
	predicate := ""
	for _, idx := range indexes {
		o.Repositories = append(o.Repositories, target(idx.Repository))
		found := ""
		for _, a := range l.Find(release.KindSBOM, "") {
			if a.Subject == idx.Digest && strings.HasPrefix(a.PredicateType, "https://spdx.dev/") {
				found = a.PredicateType
			}
		}
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

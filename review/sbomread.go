package review

import (
	"context"

	"github.com/reloader-dev/reloader/release"
)

// MaxSBOMBytes bounds one SBOM document read from a release: ours are a few
// MiB, and a layer larger than this is refused unread.
const MaxSBOMBytes = 64 << 20

// DocumentReader reads the document layer of a verified release's
// artifact, checked against its digest (mirror.Verified is one).
type DocumentReader interface {
	Document(ctx context.Context, a release.Artifact, max int64) ([]byte, error)
}

// ReadSBOMs reads every SBOM document the lock lists, in SPDX 2.3, SPDX 3
// or CycloneDX, from a release that was verified: the review is built only
// from bytes whose digests the signed lock names.
func ReadSBOMs(ctx context.Context, l *release.Lock, r DocumentReader) ([]SBOM, error) {
	var sboms []SBOM
	for _, a := range l.Artifacts {
		// SBOM documents only; a cosign attestation carrying an SBOM is
		// the same document signed, not another one.
		if a.Kind != release.KindSBOM || (a.ArtifactType != MediaTypeSPDX && a.ArtifactType != MediaTypeCycloneDX && a.ArtifactType != MediaTypeSPDX3) {
			continue
		}
		data, err := r.Document(ctx, a, MaxSBOMBytes)
		if err != nil {
			return nil, err
		}
		sboms = append(sboms, SBOM{Artifact: a, Data: data})
	}
	return sboms, nil
}

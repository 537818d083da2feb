package trust

import (
	"errors"
	"fmt"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/provenance"
)

// What verifying a release establishes, subject by subject, and how its
// verdict reads.

// SignatureResult is one signature artifact's verdict.
type SignatureResult struct {
	Digest   string `json:"digest"`
	Format   string `json:"format"`
	Verified bool   `json:"verified"`
	Error    string `json:"error,omitempty"`
}

// SubjectResult is one signed artifact (an image index, a chart, ...).
type SubjectResult struct {
	Kind       release.Kind      `json:"kind"`
	Name       string            `json:"name"`
	Variant    string            `json:"variant,omitempty"`
	Digest     string            `json:"digest"`
	Signatures []SignatureResult `json:"signatures"`
	// Formats are the signature formats the lock lists for the subject,
	// each once: cosign-signature and cosign-attestation (the .sig/.att
	// tags), sigstore-bundle (OCI referrers). A release may carry both.
	Formats []string `json:"formats,omitempty"`
	// Provenance summarises the subject's verified SLSA provenance.
	Provenance *provenance.Summary `json:"provenance,omitempty"`
	// ProvenanceError says why its provenance is refused or missing.
	ProvenanceError string `json:"provenanceError,omitempty"`
	// Error says why the subject is refused when no one signature or
	// provenance does (only attestations verified for an index or chart).
	Error    string `json:"error,omitempty"`
	Verified bool   `json:"verified"`
	// Statements are the in-toto statements of the subject's verified
	// attestations, for a caller that reads one kind (the signed review).
	Statements []Statement `json:"-"`
}

// Statement is one verified in-toto statement about a subject.
type Statement struct {
	PredicateType string
	Data          []byte
}

// Result is the verdict on a release's signatures.
type Result struct {
	Lock     LockResult      `json:"lock"`
	Subjects []SubjectResult `json:"subjects"`
}

// Err is nil only when every signed subject verified and every signature the
// lock lists verified.
func (r *Result) Err() error {
	var errs []error
	for _, s := range r.Subjects {
		if !s.Verified {
			msg := "no signature verified"
			for _, sig := range s.Signatures {
				if sig.Error != "" {
					msg = sig.Error
					break
				}
			}
			if s.Error != "" {
				msg = s.Error
			}
			if s.ProvenanceError != "" {
				msg = s.ProvenanceError
			}
			errs = append(errs, fmt.Errorf("%w: %s %s %s: %s", ErrUntrusted, s.Kind, s.Name, s.Digest, msg))
		}
	}
	return errors.Join(errs...)
}

// isSignature reports whether a verified signature artifact signs its
// subject itself: a cosign .sig, or a Sigstore bundle over the subject's
// digest (a message signature, or cosign's sign statement). A .att, or a
// bundle carrying any other statement (an SBOM, a provenance), is an
// attestation.
func isSignature(format string, statements []Statement) bool {
	switch format {
	case FormatCosignSignature:
		return true
	case FormatBundle:
		for _, st := range statements {
			if st.PredicateType != release.PredicateCosignSign {
				return false
			}
		}
		return true
	}
	return false
}

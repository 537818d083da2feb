package trust

import (
	"encoding/json"

	"github.com/reloader-dev/reloader/release/provenance"
)

// ProvenanceStatement returns the in-toto statement of a DSSE envelope (a
// cosign attestation layer, or a bundle's; format is Format of its lock
// entry) if it carries SLSA provenance. It checks no signature: the
// Verifier calls it on verified layers only.
func ProvenanceStatement(format string, payload []byte) []byte {
	if pt, st := InTotoStatement(format, payload); pt == provenance.PredicateType {
		return st
	}
	return nil
}

// InTotoStatement returns the predicate type and the in-toto statement of a
// DSSE envelope (see ProvenanceStatement), or nil for a payload that is
// not one. It checks no signature.
func InTotoStatement(format string, payload []byte) (string, []byte) {
	var env struct {
		Payload      []byte `json:"payload"`
		DSSEEnvelope *struct {
			Payload []byte `json:"payload"`
		} `json:"dsseEnvelope"`
	}
	if format == FormatCosignSignature || json.Unmarshal(payload, &env) != nil {
		return "", nil
	}
	st := env.Payload
	if format == FormatBundle {
		if env.DSSEEnvelope == nil {
			return "", nil
		}
		st = env.DSSEEnvelope.Payload
	}
	var head struct {
		PredicateType string `json:"predicateType"`
	}
	if json.Unmarshal(st, &head) != nil || head.PredicateType == "" {
		return "", nil
	}
	return head.PredicateType, st
}

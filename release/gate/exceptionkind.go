package gate

import (
	"fmt"
	"slices"
	"strings"
)

// ExceptionKind says what an exception claims about a finding. The two are
// different promises and must not be confused downstream: OpenVEX readers
// (trivy --vex) suppress not_affected findings, so an accepted risk
// published as not_affected would hide a vulnerability the release knowingly
// ships.
type ExceptionKind string

const (
	// KindAcceptedRisk: the release is affected and ships anyway until the
	// expiry. It is the kind of an exception that names none, so policy
	// files written before kinds existed load unchanged and claim no more
	// than they did.
	KindAcceptedRisk ExceptionKind = "accepted_risk"
	// KindNotAffected: the vulnerable code cannot affect the release, for
	// the reason VEXJustification names.
	KindNotAffected ExceptionKind = "not_affected"
)

// VEXJustifications are OpenVEX's justifications for not_affected, the only
// values a not_affected exception may give.
var VEXJustifications = []string{
	"component_not_present",
	"vulnerable_code_not_present",
	"vulnerable_code_not_in_execute_path",
	"vulnerable_code_cannot_be_controlled_by_adversary",
	"inline_mitigations_already_exist",
}

// EffectiveKind is the exception's kind, accepted_risk when it names none.
func (e Exception) EffectiveKind() ExceptionKind {
	if e.Kind == "" {
		return KindAcceptedRisk
	}
	return e.Kind
}

func (e Exception) validateKind() error {
	switch e.EffectiveKind() {
	case KindAcceptedRisk:
		if e.VEXJustification != "" {
			return fmt.Errorf("vexJustification %q is only for kind %s; an accepted risk is affected", e.VEXJustification, KindNotAffected)
		}
	case KindNotAffected:
		if !slices.Contains(VEXJustifications, e.VEXJustification) {
			return fmt.Errorf("kind %s needs vexJustification, one of %s (got %q)", KindNotAffected, strings.Join(VEXJustifications, ", "), e.VEXJustification)
		}
	default:
		return fmt.Errorf("kind %q: want %s or %s", e.Kind, KindAcceptedRisk, KindNotAffected)
	}
	return nil
}

package gate

import "fmt"

// A finding of UNKNOWN severity is one nobody has scored yet, typically a
// CVE published days ago. Treating it as below every threshold would let
// the newest vulnerabilities through the gate, so it blocks unless the
// policy says allowUnknown: true, or an exception accepts that finding.

// unknownBlocks reports whether UNKNOWN findings fail the release.
func (p *Policy) unknownBlocks() bool { return !p.AllowUnknown }

// validateUnknown refuses a policy that both fails on UNKNOWN and allows it:
// one of the two was not meant.
func (p *Policy) validateUnknown() error {
	if !p.AllowUnknown {
		return nil
	}
	for _, s := range p.FailOn {
		if s == SeverityUnknown {
			return fmt.Errorf("failOn lists %s and allowUnknown is true; keep one", SeverityUnknown)
		}
	}
	return nil
}

// unknownReason explains a blocking UNKNOWN finding.
func unknownReason(v Vulnerability) string {
	return fmt.Sprintf("severity UNKNOWN (not scored yet) in %s: blocks unless an exception accepts it or the release policy says allowUnknown: true", v.PkgName)
}

package review

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/reloader-dev/reloader/internal/strict"

	"github.com/reloader-dev/reloader/release/gate"
)

const maxGateReportBytes = 64 << 20

// ParseGateReport reads the release gate's result (gate.json, the JSON
// form of gate.Result). It is strict, since it decides what a reviewer
// is told about vulnerabilities: unknown fields, an unknown decision, or a
// passed verdict beside a blocking finding are errors.
func ParseGateReport(data []byte) (*gate.Result, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("gate report is empty")
	}
	var r gate.Result
	if err := strict.JSON(data, "gate report", maxGateReportBytes, &r); err != nil {
		return nil, err
	}
	var errs []error
	for i, f := range r.Findings {
		switch f.Decision {
		case gate.DecisionFail, gate.DecisionExcepted, gate.DecisionExpired, gate.DecisionBelow:
		default:
			errs = append(errs, fmt.Errorf("finding %d (%s): unknown decision %q", i, f.VulnerabilityID, f.Decision))
		}
		if f.Decision.Blocks() && r.Passed {
			errs = append(errs, fmt.Errorf("finding %d (%s) blocks the release but the report says it passed", i, f.VulnerabilityID))
		}
		if f.Decision != gate.DecisionFail && strings.TrimSpace(f.VulnerabilityID) == "" {
			errs = append(errs, fmt.Errorf("finding %d: no vulnerability id", i))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid gate report: %w", errors.Join(errs...))
	}
	return &r, nil
}

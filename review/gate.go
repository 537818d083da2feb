package review

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/reloader-dev/reloader/policy"
)

const maxGateReportBytes = 64 << 20

// ParseGateReport reads the release gate's result (gate.json, the JSON
// form of policy.Result). It is strict, since it decides what a reviewer
// is told about vulnerabilities: unknown fields, an unknown decision, or a
// passed verdict beside a blocking finding are errors.
func ParseGateReport(data []byte) (*policy.Result, error) {
	if len(data) > maxGateReportBytes {
		return nil, fmt.Errorf("gate report is larger than %d bytes", maxGateReportBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("gate report is empty")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r policy.Result
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decoding gate report: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("decoding gate report: trailing data after the JSON object")
	}
	var errs []error
	for i, f := range r.Findings {
		switch f.Decision {
		case policy.DecisionFail, policy.DecisionExcepted, policy.DecisionExpired, policy.DecisionBelow:
		default:
			errs = append(errs, fmt.Errorf("finding %d (%s): unknown decision %q", i, f.VulnerabilityID, f.Decision))
		}
		if f.Decision.Blocks() && r.Passed {
			errs = append(errs, fmt.Errorf("finding %d (%s) blocks the release but the report says it passed", i, f.VulnerabilityID))
		}
		if f.Decision != policy.DecisionFail && strings.TrimSpace(f.VulnerabilityID) == "" {
			errs = append(errs, fmt.Errorf("finding %d: no vulnerability id", i))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid gate report: %w", errors.Join(errs...))
	}
	return &r, nil
}

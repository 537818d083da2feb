// Package gate decides whether a release may ship: it reads Trivy's JSON
// vulnerability reports and judges them against the release policy file
// (release-policy.yaml in this directory) with its dated exceptions.
//
// Everything here fails closed. A report that is missing, empty, truncated,
// of another schema or names a severity we do not know is an error, never an
// empty list of findings, because "no findings" is what lets a release ship.
package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// maxReportBytes bounds what ParseReport reads. Reports of our images are a
// few KiB; a distro base with thousands of findings stays well below this.
const maxReportBytes = 64 << 20

// Severity is Trivy's severity vocabulary.
type Severity string

// Trivy's severities, lowest first.
const (
	SeverityUnknown  Severity = "UNKNOWN"
	SeverityLow      Severity = "LOW"
	SeverityMedium   Severity = "MEDIUM"
	SeverityHigh     Severity = "HIGH"
	SeverityCritical Severity = "CRITICAL"
)

func (s Severity) valid() bool {
	switch s {
	case SeverityUnknown, SeverityLow, SeverityMedium, SeverityHigh, SeverityCritical:
		return true
	}
	return false
}

// Report is the part of a Trivy JSON report (SchemaVersion 2) the gate reads.
type Report struct {
	SchemaVersion int            `json:"SchemaVersion"`
	ArtifactName  string         `json:"ArtifactName"`
	ArtifactType  string         `json:"ArtifactType"`
	Results       []ReportResult `json:"Results"`
}

// ReportResult is one scanned target inside the artifact (an OS package database,
// a Go binary, ...).
type ReportResult struct {
	Target          string          `json:"Target"`
	Class           string          `json:"Class"`
	Type            string          `json:"Type"`
	Vulnerabilities []Vulnerability `json:"Vulnerabilities"`
}

// Vulnerability is one finding as Trivy reports it.
type Vulnerability struct {
	VulnerabilityID  string   `json:"VulnerabilityID"`
	PkgName          string   `json:"PkgName"`
	InstalledVersion string   `json:"InstalledVersion"`
	FixedVersion     string   `json:"FixedVersion"`
	Status           string   `json:"Status"`
	Severity         Severity `json:"Severity"`
	Title            string   `json:"Title"`
}

// ReadReport reads and parses the report at path; a missing file is an error.
func ReadReport(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading trivy report: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReportBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading trivy report %s: %w", path, err)
	}
	r, err := ParseReport(data)
	if err != nil {
		return nil, fmt.Errorf("trivy report %s: %w", path, err)
	}
	return r, nil
}

// ParseReport decodes a Trivy JSON report and checks that it is complete
// enough to base a release decision on. Unknown fields are accepted (Trivy
// adds fields between versions); missing essential ones are not.
func ParseReport(data []byte) (*Report, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("report is empty")
	}
	if len(data) > maxReportBytes {
		return nil, fmt.Errorf("report is larger than %d bytes", maxReportBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var r Report
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("decoding report: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("decoding report: trailing data after the JSON object")
	}
	if r.SchemaVersion != 2 {
		return nil, fmt.Errorf("report has SchemaVersion %d, only 2 is understood", r.SchemaVersion)
	}
	if strings.TrimSpace(r.ArtifactName) == "" {
		return nil, errors.New("report names no artifact (ArtifactName is empty)")
	}
	// Every image we ship holds at least the controller binary, so a report
	// without a single scanned target means Trivy saw nothing, not that
	// there is nothing to see.
	if len(r.Results) == 0 {
		return nil, fmt.Errorf("report for %s has no scan results: trivy found nothing to scan", r.ArtifactName)
	}
	for i, res := range r.Results {
		for j, v := range res.Vulnerabilities {
			where := fmt.Sprintf("result %d (%s) vulnerability %d", i, res.Target, j)
			if strings.TrimSpace(v.VulnerabilityID) == "" {
				return nil, fmt.Errorf("%s: no VulnerabilityID", where)
			}
			if strings.TrimSpace(v.PkgName) == "" {
				return nil, fmt.Errorf("%s (%s): no PkgName", where, v.VulnerabilityID)
			}
			if !v.Severity.valid() {
				return nil, fmt.Errorf("%s (%s): unknown severity %q", where, v.VulnerabilityID, v.Severity)
			}
		}
	}
	return &r, nil
}

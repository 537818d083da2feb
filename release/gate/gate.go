package gate

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reloader-dev/reloader/internal/exitcode"
)

// Decision is what the gate made of one finding.
type Decision string

const (
	// DecisionFail: the finding blocks the release.
	DecisionFail Decision = "FAIL"
	// DecisionExcepted: an unexpired exception accepts the finding.
	DecisionExcepted Decision = "EXCEPTED"
	// DecisionExpired: an exception matched but has expired; blocks.
	DecisionExpired Decision = "EXPIRED-EXCEPTION"
	// DecisionBelow: the severity is not one the policy fails on.
	DecisionBelow Decision = "BELOW-THRESHOLD"
)

// Blocks reports whether the decision fails the release.
func (d Decision) Blocks() bool { return d == DecisionFail || d == DecisionExpired }

// ScannedImage is one image's report, named as the release knows the image.
type ScannedImage struct {
	// Image is a human name, e.g. "reloader linux/arm64".
	Image  string
	Report *Report
}

// Finding is one row of the gate's result.
type Finding struct {
	Image            string   `json:"image"`
	Target           string   `json:"target"`
	VulnerabilityID  string   `json:"vulnerabilityID"`
	Package          string   `json:"package"`
	InstalledVersion string   `json:"installedVersion"`
	FixedVersion     string   `json:"fixedVersion,omitempty"`
	Status           string   `json:"status,omitempty"`
	Severity         Severity `json:"severity"`
	Decision         Decision `json:"decision"`
	// Reason explains the decision: the justification of an exception,
	// its expiry, or why the finding blocks.
	Reason string `json:"reason"`
}

// Result is the gate's verdict over all images.
type Result struct {
	Passed   bool      `json:"passed"`
	Findings []Finding `json:"findings"`
	// ExpiredExceptions lists exceptions past their date, whether or not
	// anything matched them: each one fails the release.
	ExpiredExceptions []Exception `json:"expiredExceptions,omitempty"`
	// PrematureExceptions are approved on a date after the gate's: an
	// approval cannot be dated ahead to stretch an exception past its
	// maximum lifetime from today, so they apply to nothing and fail the
	// release.
	PrematureExceptions []Exception `json:"prematureExceptions,omitempty"`
	// UnusedExceptions matched no finding; they pass but should be removed.
	UnusedExceptions []Exception `json:"unusedExceptions,omitempty"`
	// AppliedExceptions accepted at least one finding: what the release
	// ships knowingly, recorded in the lock.
	AppliedExceptions []Exception `json:"appliedExceptions,omitempty"`
	// Counts is the number of findings by severity over all images.
	Counts map[Severity]int `json:"counts"`
}

// ErrRefused is the gate's verdict that a release must not ship; it carries
// the "verification or gate refused" exit code.
var ErrRefused = exitcode.New(exitcode.Refused, "the vulnerability gate refused the release")

// Evaluate judges the reports against the policy at time now. A nil report
// or no reports at all fail: a gate that saw nothing must not pass.
func Evaluate(p *Policy, images []ScannedImage, now time.Time) Result {
	res := Result{Passed: true, Counts: map[Severity]int{}}
	if len(images) == 0 {
		res.Passed = false
		res.Findings = append(res.Findings, Finding{Decision: DecisionFail, Reason: "no image reports were given to the gate"})
		return res
	}
	used := make([]bool, len(p.Exceptions))
	for _, img := range images {
		if img.Report == nil {
			res.Passed = false
			res.Findings = append(res.Findings, Finding{Image: img.Image, Decision: DecisionFail, Reason: "no trivy report for this image"})
			continue
		}
		for _, r := range img.Report.Results {
			for _, v := range r.Vulnerabilities {
				f := Finding{
					Image: img.Image, Target: r.Target, VulnerabilityID: v.VulnerabilityID,
					Package: v.PkgName, InstalledVersion: v.InstalledVersion, FixedVersion: v.FixedVersion,
					Status: v.Status, Severity: v.Severity,
				}
				switch {
				case !p.failsOn(v.Severity):
					f.Decision, f.Reason = DecisionBelow, "severity not in failOn"
				default:
					f.Decision, f.Reason = DecisionFail, failReason(v)
					for i, e := range p.Exceptions {
						if e.ID != v.VulnerabilityID || e.Package != v.PkgName {
							continue
						}
						used[i] = true
						if e.premature(now) {
							f.Reason = fmt.Sprintf("exception approved on %s, a date after the gate's: it applies from then", e.ApprovedOn.Format(time.DateOnly))
						} else if e.Expired(now) {
							f.Decision = DecisionExpired
							f.Reason = fmt.Sprintf("exception expired %s: %s", e.Expires.Format(time.DateOnly), e.Justification)
						} else {
							f.Decision = DecisionExcepted
							f.Reason = fmt.Sprintf("until %s: %s", e.Expires.Format(time.DateOnly), e.Justification)
						}
						break
					}
				}
				if f.Decision.Blocks() {
					res.Passed = false
				}
				res.Counts[v.Severity]++
				res.Findings = append(res.Findings, f)
			}
		}
	}
	for i, e := range p.Exceptions {
		if e.premature(now) {
			res.Passed = false
			res.PrematureExceptions = append(res.PrematureExceptions, e)
		} else if e.Expired(now) {
			res.Passed = false
			res.ExpiredExceptions = append(res.ExpiredExceptions, e)
		} else if !used[i] {
			res.UnusedExceptions = append(res.UnusedExceptions, e)
		} else {
			res.AppliedExceptions = append(res.AppliedExceptions, e)
		}
	}
	sort.SliceStable(res.Findings, func(i, j int) bool {
		a, b := res.Findings[i], res.Findings[j]
		if a.Decision.Blocks() != b.Decision.Blocks() {
			return a.Decision.Blocks()
		}
		if a.Image != b.Image {
			return a.Image < b.Image
		}
		return a.VulnerabilityID < b.VulnerabilityID
	})
	return res
}

func failReason(v Vulnerability) string {
	if v.Severity == SeverityUnknown {
		return unknownReason(v)
	}
	if v.FixedVersion == "" {
		return fmt.Sprintf("%s and no fix released (status %q): needs an exception or a different package", v.Severity, v.Status)
	}
	return fmt.Sprintf("%s, fixed in %s: upgrade %s", v.Severity, v.FixedVersion, v.PkgName)
}

// WriteTable prints the result for people: one line per finding, blocking
// ones first, then exceptions that need attention and the verdict.
func (r Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DECISION\tSEVERITY\tID\tPACKAGE\tINSTALLED\tFIXED\tIMAGE\tREASON")
	for _, f := range r.Findings {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Decision, dash(string(f.Severity)), dash(f.VulnerabilityID),
			dash(f.Package), dash(f.InstalledVersion), dash(f.FixedVersion), dash(f.Image), f.Reason)
	}
	for _, e := range r.ExpiredExceptions {
		fmt.Fprintf(tw, "%s\t-\t%s\t%s\t-\t-\t-\texception expired %s; remove or renew it\n", DecisionExpired, e.ID, e.Package, e.Expires.Format(time.DateOnly))
	}
	for _, e := range r.PrematureExceptions {
		fmt.Fprintf(tw, "%s\t-\t%s\t%s\t-\t-\t-\texception approved on %s, after today; date the approval when it was given\n", DecisionFail, e.ID, e.Package, e.ApprovedOn.Format(time.DateOnly))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the gate table: %w", err)
	}
	for _, e := range r.UnusedExceptions {
		fmt.Fprintf(w, "note: exception %s in %s matched nothing; consider removing it\n", e.ID, e.Package)
	}
	verdict := "PASSED"
	if !r.Passed {
		verdict = "FAILED"
	}
	var blocking int
	for _, f := range r.Findings {
		if f.Decision.Blocks() {
			blocking++
		}
	}
	_, err := fmt.Fprintf(w, "vulnerability gate %s: %d findings, %d blocking, %d expired exceptions\n",
		verdict, len(r.Findings), blocking, len(r.ExpiredExceptions))
	return err
}

func dash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

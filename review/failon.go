package review

import (
	"fmt"
	"strings"
)

// Checks --fail-on may name.
const (
	CheckLicence         = "licence"
	CheckMinimumElements = "minimum-elements"
	CheckVulnerability   = "vulnerability"
)

// ParseChecks reads a --fail-on list ("licence,minimum-elements"); the
// American "license" is accepted too.
func ParseChecks(list []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, item := range list {
		for _, c := range strings.Split(item, ",") {
			c = strings.TrimSpace(strings.ToLower(c))
			if c == "" {
				continue
			}
			if c == "license" {
				c = CheckLicence
			}
			switch c {
			case CheckLicence, CheckMinimumElements, CheckVulnerability:
			default:
				return nil, fmt.Errorf("--fail-on %q: want %s, %s or %s", c, CheckLicence, CheckMinimumElements, CheckVulnerability)
			}
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// Failures returns, for each check that fails, why; empty when all pass.
func (r *Review) Failures(checks []string) []string {
	var out []string
	for _, c := range checks {
		switch c {
		case CheckLicence:
			if n := len(r.LicenceFindings); n > 0 {
				out = append(out, fmt.Sprintf("licence: %d components have a licence the policy does not allow (%s)", n, verdictCounts(r.LicenceFindings)))
			}
		case CheckMinimumElements:
			var bad int
			var what []string
			for _, s := range r.MinimumElements {
				if len(s.Missing) > 0 {
					bad++
					// Name the components, so whoever gates on this
					// knows what to fix without opening the page.
					for _, m := range s.Missing {
						what = append(what, fmt.Sprintf("%s %s %s: %s: %s", s.Image, s.Platform, s.Format, m.Element, m.Detail))
					}
				}
			}
			if bad > 0 {
				out = append(out, fmt.Sprintf("minimum-elements: %d of %d SBOMs lack minimum elements of %s (%s)", bad, len(r.MinimumElements), r.profile(), strings.Join(what, "; ")))
			}
		case CheckVulnerability:
			v := r.Vulnerabilities
			var expired int
			for _, e := range v.Exceptions {
				if e.Expired {
					expired++
				}
			}
			switch {
			case v.Scan != nil && v.Scan.Skipped && !v.GateReport:
				out = append(out, "vulnerability: the signed lock says the release was made without a vulnerability scan (--no-scan)")
			case !v.Scanned():
				// Fail closed: no record of a scan is not a clean scan.
				out = append(out, "vulnerability: neither the lock nor a gate report records a scan, so nothing says the images were scanned")
			case !v.Passed:
				out = append(out, "vulnerability: the release gate failed")
			case expired > 0:
				out = append(out, fmt.Sprintf("vulnerability: %d exceptions have expired", expired))
			}
		}
	}
	return out
}

func verdictCounts(fs []LicenceFinding) string {
	counts := map[string]int{}
	for _, f := range fs {
		counts[string(f.Verdict)]++
	}
	var parts []string
	for _, k := range sortedKeys(counts) {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	return strings.Join(parts, ", ")
}

// profile is the profile the review was checked against, DefaultProfile
// for a review read from before profiles were recorded.
func (r *Review) profile() Profile {
	if r.Profile == "" {
		return DefaultProfile
	}
	return r.Profile
}

package pipeline

import (
	"sort"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
)

// recordedFindings is what the lock records of the gate's findings: each
// vulnerability id and package once, whatever the images, sorted, so a
// rescan after the release can name what is new.
func recordedFindings(res gate.Result) []release.ScanFinding {
	seen := map[string]bool{}
	var out []release.ScanFinding
	for _, f := range res.Findings {
		if f.VulnerabilityID == "" {
			continue
		}
		k := f.VulnerabilityID + "|" + f.Package
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, release.ScanFinding{ID: f.VulnerabilityID, Package: f.Package, Severity: string(f.Severity)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ID != out[j].ID {
			return out[i].ID < out[j].ID
		}
		return out[i].Package < out[j].Package
	})
	return out
}

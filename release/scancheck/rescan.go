package scancheck

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
)

// NewFinding is a finding of a rescan that the release's signed scan record
// does not hold: an advisory published, or scored, after the release was
// cut.
type NewFinding struct {
	ID               string `json:"id"`
	Package          string `json:"package"`
	InstalledVersion string `json:"installedVersion,omitempty"`
	FixedVersion     string `json:"fixedVersion,omitempty"`
	Severity         string `json:"severity"`
	// Images are the SBOMs (by image) it was found in.
	Images []string `json:"images"`
}

// Rescan is the verdict of a rescan.
type Rescan struct {
	New []NewFinding `json:"new"`
	// RecordHasFindings is false for a lock written before findings were
	// recorded: then every finding counts as new.
	RecordHasFindings bool `json:"recordHasFindings"`
}

// NewSince lists the findings of reports (by image name) that the lock's
// scan record does not hold, by vulnerability id and package, most severe
// first.
func NewSince(l *release.Lock, reports map[string]*gate.Report) Rescan {
	known := map[string]bool{}
	res := Rescan{New: []NewFinding{}}
	if l.Scan != nil {
		res.RecordHasFindings = len(l.Scan.Findings) > 0
		for _, f := range l.Scan.Findings {
			known[f.ID+"|"+f.Package] = true
		}
	}
	byKey := map[string]*NewFinding{}
	for img, rep := range reports {
		if rep == nil {
			continue
		}
		for _, r := range rep.Results {
			for _, v := range r.Vulnerabilities {
				k := v.VulnerabilityID + "|" + v.PkgName
				if known[k] {
					continue
				}
				nf := byKey[k]
				if nf == nil {
					nf = &NewFinding{ID: v.VulnerabilityID, Package: v.PkgName, InstalledVersion: v.InstalledVersion,
						FixedVersion: v.FixedVersion, Severity: string(v.Severity)}
					byKey[k] = nf
				}
				if !slices.Contains(nf.Images, img) {
					nf.Images = append(nf.Images, img)
				}
			}
		}
	}
	for _, nf := range byKey {
		sort.Strings(nf.Images)
		res.New = append(res.New, *nf)
	}
	rank := func(s string) int { return slices.Index(Severities, s) }
	sort.Slice(res.New, func(i, j int) bool {
		a, b := res.New[i], res.New[j]
		if rank(a.Severity) != rank(b.Severity) {
			return rank(a.Severity) < rank(b.Severity)
		}
		return a.ID+a.Package < b.ID+b.Package
	})
	return res
}

// FailOn refuses the release when a new finding has one of severities
// (--fail-on-new), naming each.
func (r Rescan) FailOn(version string, severities []string) error {
	var bad []string
	for _, f := range r.New {
		if slices.Contains(severities, f.Severity) {
			bad = append(bad, fmt.Sprintf("%s %s in %s", f.Severity, f.ID, f.Package))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("release %s: %w: the rescan finds %d new finding(s) since the release (--fail-on-new %s): %s",
		version, ErrRefused, len(bad), strings.Join(severities, ","), strings.Join(bad, "; "))
}

package review

import (
	"sort"
	"strings"

	"golang.org/x/mod/semver"
)

// Change kinds of a component between two releases.
const (
	ChangeAdded      = "added"
	ChangeRemoved    = "removed"
	ChangeUpgraded   = "upgraded"
	ChangeDowngraded = "downgraded"
	ChangeChanged    = "changed"
)

// ComponentChange is one component that differs between two releases.
type ComponentChange struct {
	Change     string `json:"change"`
	Name       string `json:"name"`
	OldVersion string `json:"oldVersion,omitempty"`
	NewVersion string `json:"newVersion,omitempty"`
	Licence    string `json:"licence,omitempty"`
}

// LicenceChange is a component whose licence differs between releases.
type LicenceChange struct {
	Name       string `json:"name"`
	OldLicence string `json:"oldLicence"`
	NewLicence string `json:"newLicence"`
}

// VulnChange is a vulnerability the gate sees in only one of the releases.
type VulnChange struct {
	ID       string `json:"id"`
	Package  string `json:"package"`
	Severity string `json:"severity"`
}

// Diff is what changed from a previous release to this one.
type Diff struct {
	Against    Identity          `json:"against"`
	Components []ComponentChange `json:"components"`
	Licences   []LicenceChange   `json:"licences"`
	NewCVEs    []VulnChange      `json:"newVulnerabilities"`
	Resolved   []VulnChange      `json:"resolvedVulnerabilities"`
}

// Empty reports whether nothing changed.
func (d *Diff) Empty() bool {
	return len(d.Components) == 0 && len(d.Licences) == 0 && len(d.NewCVEs) == 0 && len(d.Resolved) == 0
}

// summary is a component across every image of a release: a name with the
// versions and licences it ships in.
type summary struct {
	versions, licences map[string]bool
}

func summarise(cs []Component) map[string]*summary {
	out := map[string]*summary{}
	for _, c := range cs {
		s := out[c.Name]
		if s == nil {
			s = &summary{versions: map[string]bool{}, licences: map[string]bool{}}
			out[c.Name] = s
		}
		s.versions[c.Version] = true
		s.licences[c.Licence] = true
	}
	return out
}

func joined(m map[string]bool) string { return strings.Join(sortedKeys(m), ", ") }

// Compare returns what changed from old to cur, components compared by name
// across all images (a module shipped in five images is one change).
func Compare(old, cur *Review) *Diff {
	d := &Diff{Against: old.Release, Components: []ComponentChange{}, Licences: []LicenceChange{}, NewCVEs: []VulnChange{}, Resolved: []VulnChange{}}
	o, n := summarise(old.Components), summarise(cur.Components)
	for _, name := range sortedKeys(n) {
		ns := n[name]
		os, ok := o[name]
		if !ok {
			d.Components = append(d.Components, ComponentChange{Change: ChangeAdded, Name: name, NewVersion: joined(ns.versions), Licence: joined(ns.licences)})
			continue
		}
		if ov, nv := joined(os.versions), joined(ns.versions); ov != nv {
			d.Components = append(d.Components, ComponentChange{Change: versionChange(ov, nv), Name: name, OldVersion: ov, NewVersion: nv, Licence: joined(ns.licences)})
		}
		if ol, nl := joined(os.licences), joined(ns.licences); ol != nl {
			d.Licences = append(d.Licences, LicenceChange{Name: name, OldLicence: ol, NewLicence: nl})
		}
	}
	for _, name := range sortedKeys(o) {
		if _, ok := n[name]; !ok {
			d.Components = append(d.Components, ComponentChange{Change: ChangeRemoved, Name: name, OldVersion: joined(o[name].versions), Licence: joined(o[name].licences)})
		}
	}
	sort.SliceStable(d.Components, func(i, j int) bool { return d.Components[i].Name < d.Components[j].Name })
	ov, nv := vulnSet(old), vulnSet(cur)
	for _, k := range sortedKeys(nv) {
		if _, ok := ov[k]; !ok {
			d.NewCVEs = append(d.NewCVEs, nv[k])
		}
	}
	for _, k := range sortedKeys(ov) {
		if _, ok := nv[k]; !ok {
			d.Resolved = append(d.Resolved, ov[k])
		}
	}
	return d
}

func versionChange(old, cur string) string {
	ov, nv := "v"+strings.TrimPrefix(old, "v"), "v"+strings.TrimPrefix(cur, "v")
	if !semver.IsValid(ov) || !semver.IsValid(nv) {
		return ChangeChanged
	}
	if semver.Compare(nv, ov) > 0 {
		return ChangeUpgraded
	}
	return ChangeDowngraded
}

func vulnSet(r *Review) map[string]VulnChange {
	out := map[string]VulnChange{}
	for _, f := range r.Vulnerabilities.Findings {
		if f.VulnerabilityID == "" {
			continue
		}
		out[f.VulnerabilityID+"|"+f.Package] = VulnChange{ID: f.VulnerabilityID, Package: f.Package, Severity: string(f.Severity)}
	}
	return out
}

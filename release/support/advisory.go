package support

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/reloader-dev/reloader/internal/strict"

	"golang.org/x/mod/semver"
)

// Module is the Go module the project's advisories are about.
const Module = "github.com/reloader-dev/reloader"

const maxAdvisoryBytes = 1 << 20

// Advisory is one security advisory in the OSV format (schema 1.x), with
// the fields the versions page uses; Raw is the file as published.
type Advisory struct {
	SchemaVersion string      `json:"schema_version,omitempty"`
	ID            string      `json:"id"`
	Modified      time.Time   `json:"modified"`
	Published     *time.Time  `json:"published,omitempty"`
	Withdrawn     *time.Time  `json:"withdrawn,omitempty"`
	Aliases       []string    `json:"aliases,omitempty"`
	Related       []string    `json:"related,omitempty"`
	Summary       string      `json:"summary,omitempty"`
	Details       string      `json:"details,omitempty"`
	Severity      []Severity  `json:"severity,omitempty"`
	Affected      []Affected  `json:"affected"`
	References    []Reference `json:"references,omitempty"`
	Credits       []Credit    `json:"credits,omitempty"`
	// DatabaseSpecific is free-form by the OSV schema.
	DatabaseSpecific json.RawMessage `json:"database_specific,omitempty"`

	Raw []byte `json:"-"`
}

// Severity is an OSV severity score.
type Severity struct {
	Type  string `json:"type"`
	Score string `json:"score"`
}

// Affected is an OSV affected package.
type Affected struct {
	Package           Package         `json:"package"`
	Severity          []Severity      `json:"severity,omitempty"`
	Ranges            []Range         `json:"ranges,omitempty"`
	Versions          []string        `json:"versions,omitempty"`
	EcosystemSpecific json.RawMessage `json:"ecosystem_specific,omitempty"`
	DatabaseSpecific  json.RawMessage `json:"database_specific,omitempty"`
}

// Package names an OSV package.
type Package struct {
	Ecosystem string `json:"ecosystem"`
	Name      string `json:"name"`
	PURL      string `json:"purl,omitempty"`
}

// Range is an OSV version range.
type Range struct {
	Type             string          `json:"type"`
	Repo             string          `json:"repo,omitempty"`
	Events           []Event         `json:"events"`
	DatabaseSpecific json.RawMessage `json:"database_specific,omitempty"`
}

// Event is one event of an OSV range; exactly one field is set.
type Event struct {
	Introduced   string `json:"introduced,omitempty"`
	Fixed        string `json:"fixed,omitempty"`
	LastAffected string `json:"last_affected,omitempty"`
	Limit        string `json:"limit,omitempty"`
}

// Reference is an OSV reference.
type Reference struct {
	Type string `json:"type"`
	URL  string `json:"url"`
}

// Credit is an OSV credit.
type Credit struct {
	Name    string   `json:"name"`
	Contact []string `json:"contact,omitempty"`
	Type    string   `json:"type,omitempty"`
}

var (
	osvID            = regexp.MustCompile(`^[A-Z][A-Z0-9]*(-[A-Za-z0-9.:]+)+$`)
	osvSchemaVersion = regexp.MustCompile(`^1\.[0-9]+\.[0-9]+$`)
	referenceTypes   = map[string]bool{"ADVISORY": true, "ARTICLE": true, "DETECTION": true, "DISCUSSION": true, "REPORT": true,
		"FIX": true, "INTRODUCED": true, "GIT": true, "PACKAGE": true, "EVIDENCE": true, "WEB": true}
	severityTypes = map[string]bool{"CVSS_V2": true, "CVSS_V3": true, "CVSS_V4": true, "Ubuntu": true}
)

// ParseAdvisory decodes one OSV document strictly, holding it to the OSV
// schema's rules for the fields above, and requires it to be about this
// project's Go module with SEMVER ranges the page can evaluate.
func ParseAdvisory(data []byte) (*Advisory, error) {
	var a Advisory
	if err := strict.JSON(data, "OSV", maxAdvisoryBytes, &a); err != nil {
		return nil, err
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !osvID.MatchString(a.ID) {
		bad("id %q is not an OSV identifier (PREFIX-…)", a.ID)
	}
	if a.SchemaVersion != "" && !osvSchemaVersion.MatchString(a.SchemaVersion) {
		bad("schema_version %q is not 1.x.y", a.SchemaVersion)
	}
	if a.Modified.IsZero() {
		bad("modified is required")
	}
	if strings.TrimSpace(a.Summary) == "" && strings.TrimSpace(a.Details) == "" {
		bad("neither summary nor details says what the advisory is")
	}
	for _, s := range a.Severity {
		if !severityTypes[s.Type] || s.Score == "" {
			bad("severity %q %q: unknown type or no score", s.Type, s.Score)
		}
	}
	for _, r := range a.References {
		if !referenceTypes[r.Type] || !strings.HasPrefix(r.URL, "https://") && !strings.HasPrefix(r.URL, "http://") {
			bad("reference %q %q: unknown type or not a URL", r.Type, r.URL)
		}
	}
	if len(a.Affected) == 0 {
		bad("affected lists no package")
	}
	for i, af := range a.Affected {
		if af.Package.Ecosystem != "Go" || af.Package.Name != Module {
			bad("affected %d: package %s %q, want Go %s", i, af.Package.Ecosystem, af.Package.Name, Module)
		}
		if len(af.Ranges) == 0 && len(af.Versions) == 0 {
			bad("affected %d: neither ranges nor versions", i)
		}
		for _, v := range af.Versions {
			if !semver.IsValid(v) {
				bad("affected %d: version %q is not semver (vX.Y.Z)", i, v)
			}
		}
		for j, r := range af.Ranges {
			if r.Type != "SEMVER" {
				bad("affected %d range %d: type %q, want SEMVER", i, j, r.Type)
			}
			introduced := false
			for k, e := range r.Events {
				set := 0
				for _, v := range []string{e.Introduced, e.Fixed, e.LastAffected, e.Limit} {
					if v != "" {
						set++
					}
				}
				if set != 1 {
					bad("affected %d range %d event %d: exactly one of introduced, fixed, last_affected, limit", i, j, k)
					continue
				}
				if e.Introduced != "" {
					introduced = true
				}
				for _, v := range []string{e.Introduced, e.Fixed, e.LastAffected, e.Limit} {
					if v != "" && v != "0" && !semver.IsValid("v"+strings.TrimPrefix(v, "v")) {
						bad("affected %d range %d event %d: %q is not a semantic version", i, j, k, v)
					}
				}
			}
			if !introduced {
				bad("affected %d range %d: no introduced event", i, j)
			}
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid OSV advisory %q: %w", a.ID, errors.Join(errs...))
	}
	a.Raw = append([]byte(nil), data...)
	return &a, nil
}

// ReadAdvisories reads every advisory of dir: one <ID>.json per advisory
// (a README.md may explain the directory). An empty directory is no
// advisory; any other file, or a file named for another ID, is an error.
func ReadAdvisories(dir string) ([]*Advisory, error) {
	return readAdvisories(dir, "README.md")
}

// ReadSupportDir reads a directory a user assembled for reloader-mirror
// --advisories: the advisories as ReadAdvisories reads them, and the
// support table from support.yaml beside them, if there is one (else nil).
func ReadSupportDir(dir string) ([]*Advisory, *Table, error) {
	as, err := readAdvisories(dir, "README.md", "support.yaml")
	if err != nil {
		return nil, nil, err
	}
	p := filepath.Join(dir, "support.yaml")
	if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
		return as, nil, nil
	}
	t, err := ReadTable(p)
	if err != nil {
		return nil, nil, err
	}
	return as, t, nil
}

func readAdvisories(dir string, skip ...string) ([]*Advisory, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the advisories: %w", err)
	}
	var out []*Advisory
	for _, e := range entries {
		name := e.Name()
		if slices.Contains(skip, name) {
			continue
		}
		if e.IsDir() || filepath.Ext(name) != ".json" {
			return nil, fmt.Errorf("advisories %s: %s is not an OSV .json file", dir, name)
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("reading the advisories: %w", err)
		}
		a, err := ParseAdvisory(data)
		if err != nil {
			return nil, fmt.Errorf("advisory %s: %w", filepath.Join(dir, name), err)
		}
		if want := a.ID + ".json"; name != want {
			return nil, fmt.Errorf("advisory %s: holds %s, so its file name must be %s", filepath.Join(dir, name), a.ID, want)
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// Affects reports whether version (vX.Y.Z) is affected: listed, or inside
// a range (introduced inclusive, fixed and limit exclusive, last_affected
// inclusive). A withdrawn advisory affects nothing.
func (a *Advisory) Affects(version string) bool {
	if a.Withdrawn != nil || !semver.IsValid(version) {
		return false
	}
	for _, af := range a.Affected {
		for _, v := range af.Versions {
			if semver.Compare(v, version) == 0 {
				return true
			}
		}
		for _, r := range af.Ranges {
			if inRange(r.Events, version) {
				return true
			}
		}
	}
	return false
}

// inRange evaluates OSV SEMVER events in version order.
func inRange(events []Event, version string) bool {
	sv := func(s string) string {
		if s == "0" {
			return "v0.0.0"
		}
		return "v" + strings.TrimPrefix(s, "v")
	}
	affected := false
	type point struct {
		v    string
		kind int // 0 introduced, 1 fixed/limit, 2 last_affected
	}
	var pts []point
	for _, e := range events {
		switch {
		case e.Introduced != "":
			pts = append(pts, point{sv(e.Introduced), 0})
		case e.Fixed != "":
			pts = append(pts, point{sv(e.Fixed), 1})
		case e.Limit != "":
			pts = append(pts, point{sv(e.Limit), 1})
		case e.LastAffected != "":
			pts = append(pts, point{sv(e.LastAffected), 2})
		}
	}
	sort.SliceStable(pts, func(i, j int) bool { return semver.Compare(pts[i].v, pts[j].v) < 0 })
	for _, p := range pts {
		c := semver.Compare(version, p.v)
		switch p.kind {
		case 0:
			if c >= 0 {
				affected = true
			}
		case 1:
			if c >= 0 {
				affected = false
			}
		case 2:
			if c > 0 {
				affected = false
			}
		}
	}
	return affected
}

// AffectsSeries reports whether any version of the series (v1.4) is
// affected. Affected versions start at an introduced event or a listed
// version, so those, with the series' first version, are the candidates.
func (a *Advisory) AffectsSeries(s Series) bool {
	cands := []string{s.Series + ".0"}
	for _, af := range a.Affected {
		cands = append(cands, af.Versions...)
		for _, r := range af.Ranges {
			for _, e := range r.Events {
				for _, v := range []string{e.Introduced, e.LastAffected} {
					if v != "" && v != "0" {
						cands = append(cands, "v"+strings.TrimPrefix(v, "v"))
					}
				}
			}
		}
	}
	for _, v := range cands {
		if s.Contains(v) && a.Affects(v) {
			return true
		}
	}
	return false
}

// Package annotations holds the names of the annotations users put on
// workloads and on ConfigMaps/Secrets, and the decision of whether a workload
// reloads for a resource. Names and semantics are stakater/Reloader's; every
// name can be overridden by the same flags it has.
package annotations

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/reloader-dev/reloader/controller/refs"
)

// Names are the annotation keys the controller reads and writes.
type Names struct {
	Auto             string // reloader.stakater.com/auto
	ConfigMapAuto    string // configmap.reloader.stakater.com/auto
	SecretAuto       string // secret.reloader.stakater.com/auto
	ConfigMapReload  string // configmap.reloader.stakater.com/reload
	SecretReload     string // secret.reloader.stakater.com/reload
	ConfigMapExclude string // configmaps.exclude.reloader.stakater.com/reload
	SecretExclude    string // secrets.exclude.reloader.stakater.com/reload
	Search           string // reloader.stakater.com/search (workload)
	Match            string // reloader.stakater.com/match (resource)
	Ignore           string // reloader.stakater.com/ignore (resource)
	PausePeriod      string // deployment.reloader.stakater.com/pause-period
	PausedAt         string // deployment.reloader.stakater.com/paused-at
	SPCAuto          string // secretproviderclass.reloader.stakater.com/auto
	SPCReload        string // secretproviderclass.reloader.stakater.com/reload
	SPCExclude       string // secretproviderclasses.exclude.reloader.stakater.com/reload
	RolloutStrategy  string // reloader.stakater.com/rollout-strategy
	LastReloadedFrom string // reloader.stakater.com/last-reloaded-from (pod template)
	ConfigMapKeys    string // configmap.reloader.stakater.com/keys (usedkeys.go)
	SecretKeys       string // secret.reloader.stakater.com/keys
	UsedKeysOnly     string // reloader.stakater.com/reload-on-used-keys-only
	ChangeWindow     string // reloader.stakater.com/change-window (decide/window.go)
	Approval         string // reloader.stakater.com/approval: required, notify-only or none (decide/approval.go)
	Approve          string // reloader.stakater.com/approve: the change a person approves (metadata only)
}

// Defaults returns the original's annotation names.
func Defaults() Names {
	return Names{
		Auto:             "reloader.stakater.com/auto",
		ConfigMapAuto:    "configmap.reloader.stakater.com/auto",
		SecretAuto:       "secret.reloader.stakater.com/auto",
		ConfigMapReload:  "configmap.reloader.stakater.com/reload",
		SecretReload:     "secret.reloader.stakater.com/reload",
		ConfigMapExclude: "configmaps.exclude.reloader.stakater.com/reload",
		SecretExclude:    "secrets.exclude.reloader.stakater.com/reload",
		Search:           "reloader.stakater.com/search",
		Match:            "reloader.stakater.com/match",
		Ignore:           "reloader.stakater.com/ignore",
		PausePeriod:      "deployment.reloader.stakater.com/pause-period",
		PausedAt:         "deployment.reloader.stakater.com/paused-at",
		SPCAuto:          "secretproviderclass.reloader.stakater.com/auto",
		SPCReload:        "secretproviderclass.reloader.stakater.com/reload",
		SPCExclude:       "secretproviderclasses.exclude.reloader.stakater.com/reload",
		RolloutStrategy:  "reloader.stakater.com/rollout-strategy",
		LastReloadedFrom: "reloader.stakater.com/last-reloaded-from",
		ConfigMapKeys:    "configmap.reloader.stakater.com/keys",
		SecretKeys:       "secret.reloader.stakater.com/keys",
		UsedKeysOnly:     "reloader.stakater.com/reload-on-used-keys-only",
		ChangeWindow:     "reloader.stakater.com/change-window",
		Approval:         "reloader.stakater.com/approval",
		Approve:          "reloader.stakater.com/approve",
	}
}

// ApprovalFor is the workload's approval mode annotation, where it was
// read ("metadata" or "pod template"), and whether it has one. The
// approving annotation itself (Approve) is read on the metadata only:
// writing it on the pod template would roll the workload.
func (n Names) ApprovalFor(w Workload) (value, on string, ok bool) {
	return w.lookup(n.Approval)
}

// Applied is our own annotation, on the workload's metadata (never the pod
// template, so writing it never rolls anything): the hash of every resource
// the workload watches as last applied to it. It is what makes the controller
// level-triggered and stateless.
const Applied = "reloader.dev/applied-hashes"

// AppliedVersions is our annotation beside Applied, written with it in the
// same request: for each entry of the record, the resourceVersion of the
// ConfigMap or Secret its hash was read from ("<version>/<hash prefix>"), so
// that a writer with an older view never replaces a newer record
// (decide/versions.go).
const AppliedVersions = "reloader.dev/applied-versions"

// Workload is what the decision reads from a workload.
type Workload struct {
	Meta     map[string]string // metadata.annotations
	Template map[string]string // pod template annotations (fallback)
}

// Resource is what the decision reads from a ConfigMap or Secret.
type Resource struct {
	Kind        refs.Kind
	Name        string
	Annotations map[string]string
}

// Decision says whether a workload reloads when a resource changes.
type Decision struct {
	// Reload is true when the workload watches the resource.
	Reload bool
	// Auto is true when it watches it through auto or search: the marker then
	// goes on a container that uses the resource, and an unused resource is
	// not watched. A named reload (Auto false) fires even for an unused one.
	Auto bool
	// Errors are invalid annotation values found on the way; the decision
	// still stands for the valid parts.
	Errors []error
	// Rule is the rule that settled the decision; Detail says it for
	// people ("watched: named by ... on the metadata").
	Rule   Rule
	Detail string
}

// KindNames are the annotations that name one resource kind.
type KindNames struct {
	Auto, Reload, Exclude string
}

// kindNames is, per resource kind, which of Names' fields name it: one row
// per kind, so a new kind is one entry here.
var kindNames = map[refs.Kind]func(Names) KindNames{
	refs.ConfigMap: func(n Names) KindNames {
		return KindNames{Auto: n.ConfigMapAuto, Reload: n.ConfigMapReload, Exclude: n.ConfigMapExclude}
	},
	refs.Secret: func(n Names) KindNames {
		return KindNames{Auto: n.SecretAuto, Reload: n.SecretReload, Exclude: n.SecretExclude}
	},
	refs.SecretProviderClass: func(n Names) KindNames {
		return KindNames{Auto: n.SPCAuto, Reload: n.SPCReload, Exclude: n.SPCExclude}
	},
}

// For returns the annotations of kind. An unknown kind reads as a ConfigMap,
// as the original does.
func (n Names) For(kind refs.Kind) KindNames {
	row, ok := kindNames[kind]
	if !ok {
		row = kindNames[refs.ConfigMap]
	}
	return row(n)
}

func (n Names) reload(kind refs.Kind) string    { return n.For(kind).Reload }
func (n Names) typedAuto(kind refs.Kind) string { return n.For(kind).Auto }
func (n Names) exclude(kind refs.Kind) string   { return n.For(kind).Exclude }

// Source returns the annotations the decision reads: the workload's metadata
// when it carries any reload annotation, otherwise the pod template's.
func (n Names) Source(w Workload, kind refs.Kind) map[string]string {
	src, _ := n.source(w, kind)
	return src
}

// Interested reports whether a workload carries any annotation that can make
// it reload (or autoReloadAll is on): workloads that cannot are never synced.
func (n Names) Interested(w Workload, autoReloadAll bool) bool {
	if autoReloadAll {
		return true
	}
	for _, m := range []map[string]string{w.Meta, w.Template} {
		for _, k := range n.OptInKeys() {
			if _, ok := m[k]; ok {
				return true
			}
		}
	}
	return false
}

// HasNamedReload reports whether the workload names resources of kind by
// pattern, so any resource of that kind in its namespace may concern it.
func (n Names) HasNamedReload(w Workload, kind refs.Kind) bool {
	_, ok := n.ReloadList(w, kind)
	return ok
}

// ReloadList returns the workload's reload list for kind (the value of
// configmap|secret|secretproviderclass.reloader.stakater.com/reload where the
// decision reads it) and whether it has one.
func (n Names) ReloadList(w Workload, kind refs.Kind) (string, bool) {
	list, ok := n.Source(w, kind)[n.reload(kind)]
	return list, ok
}

// Searches reports whether the workload opted into search/match.
func (n Names) Searches(w Workload) bool {
	return n.Source(w, refs.ConfigMap)[n.Search] == "true" || n.Source(w, refs.Secret)[n.Search] == "true"
}

// Decide applies the original's rules, in its order: an ignored resource never
// reloads; an excluded name never reloads; a name matching the reload list
// reloads (named); search+match reloads (auto); auto, typed auto, or
// autoReloadAll with neither set reloads (auto). The Decision names the rule
// that settled it.
func (n Names) Decide(w Workload, r Resource, autoReloadAll bool) Decision {
	var d Decision
	if v, ok := r.Annotations[n.Ignore]; ok {
		ignored, err := strconv.ParseBool(v)
		if err != nil {
			d.Errors = append(d.Errors, fmt.Errorf("%s %q: annotation %s=%q is not a boolean", r.Kind, r.Name, n.Ignore, v))
		}
		if ignored {
			return d.because(RuleIgnored, "not watched: the %s carries %s=%q", r.Kind.Title(), n.Ignore, v)
		}
	}
	src, where := n.source(w, r.Kind)
	excl, ok := w.Meta[n.exclude(r.Kind)]
	exclOn := "metadata"
	if !ok {
		excl, exclOn = src[n.exclude(r.Kind)], where
	}
	for _, name := range strings.Split(excl, ",") {
		if name = strings.TrimSpace(name); name != "" && name == r.Name {
			return d.because(RuleExcluded, "not watched: excluded by %s=%q on the %s", n.exclude(r.Kind), excl, exclOn)
		}
	}
	if list, ok := src[n.reload(r.Kind)]; ok {
		matched, errs := MatchList(list, r.Name)
		for _, err := range errs {
			d.Errors = append(d.Errors, fmt.Errorf("annotation %s: %w", n.reload(r.Kind), err))
		}
		if matched {
			return d.watching(false).because(RuleNamed, "watched: named by %s=%q on the %s", n.reload(r.Kind), list, where)
		}
	}
	if src[n.Search] == "true" && r.Annotations[n.Match] == "true" {
		return d.watching(true).because(RuleSearchMatch, "watched: %s=\"true\" on the %s and %s=\"true\" on the %s", n.Search, where, n.Match, r.Kind.Title())
	}
	auto, autoSet := src[n.Auto]
	typed, typedSet := src[n.typedAuto(r.Kind)]
	autoOn := parseBool(auto, n.Auto, autoSet, &d)
	typedOn := parseBool(typed, n.typedAuto(r.Kind), typedSet, &d)
	switch {
	case autoOn:
		return d.watching(true).because(RuleAuto, "watched: %s=%q on the %s", n.Auto, auto, where)
	case typedOn:
		return d.watching(true).because(RuleTypedAuto, "watched: %s=%q on the %s", n.typedAuto(r.Kind), typed, where)
	case !autoSet && !typedSet && autoReloadAll:
		return d.watching(true).because(RuleAutoReloadAll, "watched: --auto-reload-all")
	}
	return n.notWatched(d, w, r, src, where)
}

func parseBool(v, key string, set bool, d *Decision) bool {
	if !set {
		return false
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		d.Errors = append(d.Errors, fmt.Errorf("annotation %s=%q is not a boolean", key, v))
	}
	return b
}

// MatchList reports whether name matches one entry of a comma-separated list
// of regular expressions, each anchored at both ends. An invalid entry is
// returned as an error and skipped; the others still match (the original
// panicked on one, #1193).
func MatchList(list, name string) (bool, []error) {
	var errs []error
	for _, entry := range strings.Split(list, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		re, err := regexp.Compile("^(?:" + entry + ")$")
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid regular expression %q: %w", entry, err))
			continue
		}
		if re.MatchString(name) {
			return true, errs
		}
	}
	return false, errs
}

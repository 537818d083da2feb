package annotations

import (
	"fmt"
	"strconv"

	"github.com/reloader-dev/reloader/controller/refs"
)

// Rule names the rule of Decide that settled a decision. It is set where the
// rule fires, so the reason a reader is given cannot drift from the verdict.
type Rule string

// Rules that watch a resource.
const (
	RuleNamed         Rule = "named"           // the reload list names it
	RuleSearchMatch   Rule = "search-match"    // search on the workload, match on the resource
	RuleAuto          Rule = "auto"            // reloader.stakater.com/auto
	RuleTypedAuto     Rule = "typed-auto"      // the auto annotation of its kind
	RuleAutoReloadAll Rule = "auto-reload-all" // --auto-reload-all, no auto annotation set
)

// Rules that do not watch a resource.
const (
	RuleIgnored            Rule = "ignored"               // the resource carries ignore=true
	RuleExcluded           Rule = "excluded"              // the exclude list names it
	RuleSearchWithoutMatch Rule = "search-without-match"  // search on, match missing
	RuleAutoFalse          Rule = "auto-false"            // auto set to something not true
	RuleTypedAutoFalse     Rule = "typed-auto-false"      // the typed auto of its kind set to something not true
	RuleTypedAutoOtherKind Rule = "typed-auto-other-kind" // only another kind's typed auto is on
	RuleNotNamed           Rule = "not-named"             // a reload list that does not name it
	RuleNotOptedIn         Rule = "not-opted-in"          // nothing asks for it
)

// because settles d by rule; Detail says it for people, naming the
// annotation and where the decision read it.
func (d Decision) because(rule Rule, format string, args ...any) Decision {
	d.Rule, d.Detail = rule, fmt.Sprintf(format, args...)
	return d
}

// watching marks d as watching the resource, through auto or search when
// auto is true.
func (d Decision) watching(auto bool) Decision {
	d.Reload, d.Auto = true, auto
	return d
}

// source is Source and where it is: "metadata" or "pod template".
func (n Names) source(w Workload, kind refs.Kind) (map[string]string, string) {
	for _, k := range []string{n.reload(kind), n.Auto, n.typedAuto(kind), n.Search} {
		if _, ok := w.Meta[k]; ok {
			return w.Meta, "metadata"
		}
	}
	return w.Template, "pod template"
}

// ReadOn says where the decision reads the workload's annotations for kind:
// "metadata" or "pod template" (Source).
func (n Names) ReadOn(w Workload, kind refs.Kind) string {
	_, where := n.source(w, kind)
	return where
}

// notWatched says why Decide watches r through none of its rules: the first
// of search without match, an auto annotation that is not true, another
// kind's typed auto, a reload list not naming it, or no opt-in at all.
func (n Names) notWatched(d Decision, w Workload, r Resource, src map[string]string, where string) Decision {
	title := r.Kind.Title()
	if src[n.Search] == "true" {
		return d.because(RuleSearchWithoutMatch, "not watched: %s=\"true\" on the %s, but the %s lacks %s=\"true\"", n.Search, where, title, n.Match)
	}
	if v, set := src[n.Auto]; set {
		return d.because(RuleAutoFalse, "not watched: %s=%q on the %s opts out", n.Auto, v, where)
	}
	if v, set := src[n.typedAuto(r.Kind)]; set {
		return d.because(RuleTypedAutoFalse, "not watched: %s=%q on the %s opts out", n.typedAuto(r.Kind), v, where)
	}
	for _, other := range refs.Kinds() {
		if other == r.Kind {
			continue
		}
		osrc, owhere := n.source(w, other)
		if v := osrc[n.typedAuto(other)]; isTrue(v) {
			return d.because(RuleTypedAutoOtherKind, "not watched: %s=%q on the %s covers only %ss; add %s=\"true\" for %ss",
				n.typedAuto(other), v, owhere, other.Title(), n.typedAuto(r.Kind), title)
		}
	}
	if list, ok := src[n.reload(r.Kind)]; ok {
		return d.because(RuleNotNamed, "not watched: %s=%q on the %s does not name it", n.reload(r.Kind), list, where)
	}
	return d.because(RuleNotOptedIn, "not watched: the workload is not opted in for %ss (add %s=\"true\" to its metadata)", title, n.Auto)
}

func isTrue(v string) bool {
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

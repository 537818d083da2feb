package annotations

import (
	"testing"

	"github.com/reloader-dev/reloader/controller/refs"
)

// Every rule of Decide, one row each: the rule that settles the decision and
// the sentence `reloader explain` prints for it.
func TestDecideNamesTheRuleThatSettledIt(t *testing.T) {
	meta := func(kv ...string) Workload { return Workload{Meta: pairs(kv)} }
	cases := []struct {
		name    string
		w       Workload
		r       Resource
		all     bool
		watched bool
		rule    Rule
		detail  string
	}{
		{"ignored", meta(names.Auto, "true"), cm("a", map[string]string{names.Ignore: "true"}), false, false, RuleIgnored,
			`not watched: the ConfigMap carries reloader.stakater.com/ignore="true"`},
		{"excluded on the metadata", meta(names.Auto, "true", names.ConfigMapExclude, "x, a"), cm("a", nil), false, false, RuleExcluded,
			`not watched: excluded by configmaps.exclude.reloader.stakater.com/reload="x, a" on the metadata`},
		{"excluded on the template", Workload{Template: pairs([]string{names.Auto, "true", names.ConfigMapExclude, "a"})}, cm("a", nil), false, false, RuleExcluded,
			`not watched: excluded by configmaps.exclude.reloader.stakater.com/reload="a" on the pod template`},
		{"named", meta(names.ConfigMapReload, "x,a"), cm("a", nil), false, true, RuleNamed,
			`watched: named by configmap.reloader.stakater.com/reload="x,a" on the metadata`},
		{"search-match", meta(names.Search, "true"), cm("a", map[string]string{names.Match: "true"}), false, true, RuleSearchMatch,
			`watched: reloader.stakater.com/search="true" on the metadata and reloader.stakater.com/match="true" on the ConfigMap`},
		{"auto", Workload{Template: pairs([]string{names.Auto, "true"})}, cm("a", nil), false, true, RuleAuto,
			`watched: reloader.stakater.com/auto="true" on the pod template`},
		{"typed-auto", meta(names.SecretAuto, "True"), Resource{Kind: refs.Secret, Name: "a"}, false, true, RuleTypedAuto,
			`watched: secret.reloader.stakater.com/auto="True" on the metadata`},
		{"auto-reload-all", Workload{}, cm("a", nil), true, true, RuleAutoReloadAll, `watched: --auto-reload-all`},
		{"search-without-match", meta(names.Search, "true"), cm("a", nil), false, false, RuleSearchWithoutMatch,
			`not watched: reloader.stakater.com/search="true" on the metadata, but the ConfigMap lacks reloader.stakater.com/match="true"`},
		{"auto-false", meta(names.Auto, "false"), cm("a", nil), true, false, RuleAutoFalse,
			`not watched: reloader.stakater.com/auto="false" on the metadata opts out`},
		{"typed-auto-false", meta(names.ConfigMapAuto, "no"), cm("a", nil), false, false, RuleTypedAutoFalse,
			`not watched: configmap.reloader.stakater.com/auto="no" on the metadata opts out`},
		{"typed-auto-other-kind", meta(names.SecretAuto, "true"), cm("a", nil), false, false, RuleTypedAutoOtherKind,
			`not watched: secret.reloader.stakater.com/auto="true" on the metadata covers only Secrets; add configmap.reloader.stakater.com/auto="true" for ConfigMaps`},
		{"not-named", meta(names.ConfigMapReload, "other-.*"), cm("a", nil), false, false, RuleNotNamed,
			`not watched: configmap.reloader.stakater.com/reload="other-.*" on the metadata does not name it`},
		{"not-opted-in", Workload{}, cm("a", nil), false, false, RuleNotOptedIn,
			`not watched: the workload is not opted in for ConfigMaps (add reloader.stakater.com/auto="true" to its metadata)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := names.Decide(tc.w, tc.r, tc.all)
			if d.Reload != tc.watched || d.Rule != tc.rule || d.Detail != tc.detail {
				t.Errorf("Decide = watched %v, %s, %q\nwant watched %v, %s, %q", d.Reload, d.Rule, d.Detail, tc.watched, tc.rule, tc.detail)
			}
		})
	}
}

func pairs(kv []string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

package decide

import (
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/controller/annotations"
)

// The Decision says, per resource, whether it is watched and by which rule:
// the rules of annotations, and those the decision adds (a kind it does not
// watch, a missing resource under search, a resource watched only by name).
func TestDecisionGivesEachResourceItsVerdict(t *testing.T) {
	named := Resource{"configmap", "named-only"}
	cases := []struct {
		name   string
		o      Options
		meta   map[string]string
		states map[Resource]State
		want   []Verdict
	}{
		{name: "auto watches both", meta: with(names.Auto, "true"),
			states: map[Resource]State{appCM: existing("h1"), creds: existing("h2")},
			want: []Verdict{
				{appCM, true, annotations.RuleAuto, `watched: reloader.stakater.com/auto="true" on the metadata`},
				{creds, true, annotations.RuleAuto, `watched: reloader.stakater.com/auto="true" on the metadata`},
			}},
		{name: "a kind turned off is kind-ignored", o: Options{IgnoreSecrets: true}, meta: with(names.Auto, "true"),
			states: map[Resource]State{appCM: existing("h1"), creds: existing("h2")},
			want: []Verdict{
				{appCM, true, annotations.RuleAuto, `watched: reloader.stakater.com/auto="true" on the metadata`},
				{creds, false, RuleKindIgnored, "the controller does not watch Secrets (--resources-to-ignore=secrets)"},
			}},
		{name: "ConfigMaps turned off", o: Options{IgnoreConfigMaps: true}, meta: with(names.Auto, "true"),
			states: map[Resource]State{appCM: existing("h1"), creds: existing("h2")},
			want: []Verdict{
				{appCM, false, RuleKindIgnored, "the controller does not watch ConfigMaps (--resources-to-ignore=configMaps)"},
				{creds, true, annotations.RuleAuto, `watched: reloader.stakater.com/auto="true" on the metadata`},
			}},
		{name: "typed auto of the other kind", meta: with(names.SecretAuto, "true"),
			states: map[Resource]State{appCM: existing("h1"), creds: existing("h2")},
			want: []Verdict{
				{appCM, false, annotations.RuleTypedAutoOtherKind, `not watched: secret.reloader.stakater.com/auto="true" on the metadata covers only Secrets; add configmap.reloader.stakater.com/auto="true" for ConfigMaps`},
				{creds, true, annotations.RuleTypedAuto, `watched: secret.reloader.stakater.com/auto="true" on the metadata`},
			}},
		{name: "an unused resource watched by name", meta: with(names.ConfigMapReload, "named-.*"),
			states: map[Resource]State{appCM: existing("h1"), creds: existing("h2"), named: existing("h3")},
			want: []Verdict{
				{appCM, false, annotations.RuleNotNamed, `not watched: configmap.reloader.stakater.com/reload="named-.*" on the metadata does not name it`},
				{named, true, annotations.RuleNamed, `watched: named by configmap.reloader.stakater.com/reload="named-.*" on the metadata`},
				{creds, false, annotations.RuleNotOptedIn, `not watched: the workload is not opted in for Secrets (add reloader.stakater.com/auto="true" to its metadata)`},
			}},
		{name: "a missing resource under search is watched for its creation", meta: with(names.Search, "true"),
			states: map[Resource]State{creds: {Hash: "h2", Exists: true, Annotations: with(names.Match, "true")}},
			want: []Verdict{
				{appCM, true, annotations.RuleSearchMatch, `watched: reloader.stakater.com/search="true" (a missing ConfigMap counts as matched)`},
				{creds, true, annotations.RuleSearchMatch, `watched: reloader.stakater.com/search="true" on the metadata and reloader.stakater.com/match="true" on the Secret`},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.o, deployment(t, tc.meta), &testReader{states: tc.states}, now)
			got := verdictLines(d.Verdicts)
			if want := verdictLines(tc.want); got != want {
				t.Errorf("verdicts:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func verdictLines(vs []Verdict) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString(v.String() + " watched=" + map[bool]string{true: "yes", false: "no"}[v.Watched] + " " + string(v.Rule) + ": " + v.Detail + "\n")
	}
	return b.String()
}

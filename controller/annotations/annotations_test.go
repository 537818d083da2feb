package annotations

import (
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/controller/refs"
)

var names = Defaults()

func cm(name string, ann map[string]string) Resource {
	return Resource{Kind: refs.ConfigMap, Name: name, Annotations: ann}
}

func TestDecide(t *testing.T) {
	cases := []struct {
		name     string
		w        Workload
		r        Resource
		all      bool
		reload   bool
		auto     bool
		errCount int
	}{
		{"auto on metadata", Workload{Meta: map[string]string{names.Auto: "true"}}, cm("a", nil), false, true, true, 0},
		{"auto on template when metadata has none", Workload{Template: map[string]string{names.Auto: "true"}}, cm("a", nil), false, true, true, 0},
		{"metadata wins over template", Workload{Meta: map[string]string{names.Auto: "false"}, Template: map[string]string{names.Auto: "true"}}, cm("a", nil), false, false, false, 0},
		{"typed auto matches its kind", Workload{Meta: map[string]string{names.ConfigMapAuto: "true"}}, cm("a", nil), false, true, true, 0},
		{"typed auto ignores the other kind", Workload{Meta: map[string]string{names.SecretAuto: "true"}}, cm("a", nil), false, false, false, 0},
		{"named reload, exact", Workload{Meta: map[string]string{names.ConfigMapReload: "a,b"}}, cm("b", nil), false, true, false, 0},
		{"named reload is anchored", Workload{Meta: map[string]string{names.ConfigMapReload: "app"}}, cm("app-extra", nil), false, false, false, 0},
		{"named reload, regex", Workload{Meta: map[string]string{names.ConfigMapReload: "app-.*"}}, cm("app-extra", nil), false, true, false, 0},
		{"invalid regex is reported, valid entries still match", Workload{Meta: map[string]string{names.ConfigMapReload: "([, b"}}, cm("b", nil), false, true, false, 1},
		{"exclude beats auto", Workload{Meta: map[string]string{names.Auto: "true", names.ConfigMapExclude: "x, a"}}, cm("a", nil), false, false, false, 0},
		{"ignore on the resource beats everything", Workload{Meta: map[string]string{names.ConfigMapReload: "a"}}, cm("a", map[string]string{names.Ignore: "true"}), false, false, false, 0},
		{"search needs match", Workload{Meta: map[string]string{names.Search: "true"}}, cm("a", nil), false, false, false, 0},
		{"search with match", Workload{Meta: map[string]string{names.Search: "true"}}, cm("a", map[string]string{names.Match: "true"}), false, true, true, 0},
		{"auto-reload-all with nothing set", Workload{}, cm("a", nil), true, true, true, 0},
		{"auto=false opts out of auto-reload-all", Workload{Meta: map[string]string{names.Auto: "false"}}, cm("a", nil), true, false, false, 0},
		{"a non-boolean auto is reported", Workload{Meta: map[string]string{names.Auto: "yes please"}}, cm("a", nil), false, false, false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := names.Decide(c.w, c.r, c.all)
			if d.Reload != c.reload || d.Auto != c.auto || len(d.Errors) != c.errCount {
				t.Fatalf("Decide = reload %v auto %v errors %v; want reload %v auto %v %d errors", d.Reload, d.Auto, d.Errors, c.reload, c.auto, c.errCount)
			}
		})
	}
}

func TestInvalidRegexErrorNamesTheAnnotationAndEntry(t *testing.T) {
	d := names.Decide(Workload{Meta: map[string]string{names.SecretReload: "ok,(bad"}}, Resource{Kind: refs.Secret, Name: "x"}, false)
	if len(d.Errors) != 1 || !strings.Contains(d.Errors[0].Error(), names.SecretReload) || !strings.Contains(d.Errors[0].Error(), "(bad") {
		t.Fatalf("errors = %v", d.Errors)
	}
}

func FuzzDecide(f *testing.F) {
	f.Add("true", "a,b.*", "x", "a", "true", "true")
	f.Add("", "(", "", "b", "", "")
	f.Add("maybe", "[a-", "b,,c", "c", "nope", "false")
	f.Fuzz(func(t *testing.T, auto, reload, exclude, name, search, match string) {
		w := Workload{Meta: map[string]string{names.Auto: auto, names.ConfigMapReload: reload, names.ConfigMapExclude: exclude, names.Search: search}}
		d := names.Decide(w, cm(name, map[string]string{names.Match: match}), false)
		if d.Reload && !d.Auto {
			if ok, _ := MatchList(reload, name); !ok {
				t.Fatalf("named reload of %q without a matching entry in %q", name, reload)
			}
		}
		for _, e := range strings.Split(exclude, ",") {
			if strings.TrimSpace(e) == name && name != "" && d.Reload {
				t.Fatalf("excluded %q reloaded", name)
			}
		}
	})
}

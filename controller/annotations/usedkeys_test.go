package annotations

import (
	"maps"
	"slices"
	"testing"

	"github.com/reloader-dev/reloader/controller/refs"
)

func TestParseKeysListsKeysPerResourceAndReportsBadEntries(t *testing.T) {
	got, errs := ParseKeys(" app-config/URL, app-config/LOG_LEVEL,,app-config/URL,db/password, nokey, a/b/c, /k, Bad_Name/k, x/not valid")
	want := map[string][]string{"app-config": {"LOG_LEVEL", "URL"}, "db": {"password"}}
	if !maps.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("keys = %v, want %v", got, want)
	}
	if len(errs) != 5 {
		t.Errorf("errors = %v, want 5 (nokey, a/b/c, /k, Bad_Name/k, x/not valid)", errs)
	}
}

func TestListedKeysReadsTheMetadataThenThePodTemplate(t *testing.T) {
	n := Defaults()
	w := Workload{Meta: map[string]string{n.SecretKeys: "db/password"}, Template: map[string]string{n.SecretKeys: "db/user", n.ConfigMapKeys: "app/URL"}}
	if keys, _, _ := n.ListedKeys(w, refs.Secret); !slices.Equal(keys["db"], []string{"password"}) {
		t.Errorf("secret keys = %v: the metadata wins", keys)
	}
	if keys, text, _ := n.ListedKeys(w, refs.ConfigMap); !slices.Equal(keys["app"], []string{"URL"}) || text == "" {
		t.Errorf("configmap keys = %v (%q): the template is read when the metadata has none", keys, text)
	}
	if keys, _, _ := n.ListedKeys(w, refs.SecretProviderClass); keys != nil {
		t.Error("a SecretProviderClass has no keys annotation")
	}
}

func TestUsedKeysOnlyAnnotation(t *testing.T) {
	n := Defaults()
	for _, tc := range []struct {
		v            string
		on, set, bad bool
	}{{"true", true, true, false}, {"false", false, true, false}, {"yes", false, false, true}} {
		on, set, err := n.UsedKeysOnlyFor(Workload{Meta: map[string]string{n.UsedKeysOnly: tc.v}})
		if on != tc.on || set != tc.set || (err != nil) != tc.bad {
			t.Errorf("%q: on=%v set=%v err=%v", tc.v, on, set, err)
		}
	}
	if _, set, _ := n.UsedKeysOnlyFor(Workload{}); set {
		t.Error("no annotation is a choice")
	}
}

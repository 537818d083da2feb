package annotations

import (
	"testing"

	"github.com/reloader-dev/reloader/controller/refs"
)

// Every resource kind has a row naming its three annotations, each distinct
// from every other kind's; an unknown kind reads as a ConfigMap.
func TestEveryKindHasItsAnnotations(t *testing.T) {
	n := Defaults()
	seen := map[string]refs.Kind{}
	for _, k := range refs.Kinds() {
		if _, ok := kindNames[k]; !ok {
			t.Errorf("%s: no row", k)
			continue
		}
		kn := n.For(k)
		for _, key := range []string{kn.Auto, kn.Reload, kn.Exclude} {
			if key == "" {
				t.Errorf("%s: an empty annotation in %+v", k, kn)
			}
			if other, dup := seen[key]; dup {
				t.Errorf("%s names both %s and %s", key, other, k)
			}
			seen[key] = k
		}
	}
	if len(kindNames) != len(refs.Kinds()) {
		t.Errorf("%d rows for %d kinds", len(kindNames), len(refs.Kinds()))
	}
	if n.For("Pod") != n.For(refs.ConfigMap) {
		t.Error("an unknown kind does not read as a ConfigMap")
	}
	if n.For(refs.Secret).Reload != n.SecretReload {
		t.Errorf("Secret's reload annotation is %q, want %q", n.For(refs.Secret).Reload, n.SecretReload)
	}
}

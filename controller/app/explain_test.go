package app

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/controller/metainfo"
)

// explain reads the options a controller published back into the options it
// runs with: publishing then reading must be the identity, or explain would
// reason with other rules than the controller's.
func TestMetaInfoReadsBackTheOptionsTheControllerPublished(t *testing.T) {
	o := DefaultOptions()
	o.AutoReloadAll = true
	o.ReloadStrategy = "annotations"
	o.ReloadOnCreate, o.ReloadOnDelete = "true", "true"
	o.Names.Auto = "example.com/auto"
	o.Names.Match = "example.com/match"
	o.ResourcesToIgnore = []string{"secrets"}
	o.IgnoredWorkloads = []string{"jobs"}
	o.Namespaces = []string{"a", "b"}
	o.NamespacesToIgnore = []string{"kube-system"}
	o.NamespaceSelectors = []string{"env=prod"}
	o.ResourceSelectors = []string{"reload:yes"}
	o.MinReloadInterval = 30 * time.Second
	o.EnableHA = true
	o.UsedKeysOnly, o.FingerprintKeySecret = true, "my-key"
	env := func(k string) string { return map[string]string{"POD_NAME": "p", "POD_NAMESPACE": "reloader"}[k] }
	r, err := o.Resolve(env)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := metainfo.ConfigMap(metainfo.Info{Namespace: "reloader", DeploymentName: "reloader", Options: o.effective(r)})
	if err != nil {
		t.Fatal(err)
	}
	mi, err := parseMetaInfo("reloader", cm.Data)
	if err != nil {
		t.Fatal(err)
	}
	back, err := mi.options.Resolve(env)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := mi.options.effective(back), o.effective(r); !reflect.DeepEqual(got, want) {
		t.Fatalf("read back:\n%+v\nwant\n%+v", got, want)
	}
	if back.Controller.NamespaceSelector.String() != "env=prod" || back.Controller.ResourceSelector != "reload=yes" {
		t.Fatalf("selectors read back as %v and %q", back.Controller.NamespaceSelector, back.Controller.ResourceSelector)
	}
	if back.FingerprintKey != r.FingerprintKey || r.FingerprintKey.String() != "reloader/my-key" {
		t.Fatalf("fingerprint key Secret read back as %v, published from %v", back.FingerprintKey, r.FingerprintKey)
	}
	if mi.deployment.Name != "reloader" || mi.deployment.Namespace != "reloader" {
		t.Fatalf("deployment = %+v", mi.deployment)
	}
}

func TestMetaInfoThatIsNotJSONIsNamed(t *testing.T) {
	_, err := parseMetaInfo("ops", map[string]string{"reloaderOptions": "{not json"})
	if err == nil || !strings.Contains(err.Error(), "ops/reloader-meta-info") {
		t.Fatalf("got %v, want an error naming the ConfigMap", err)
	}
	if _, err := parseMetaInfo("ops", map[string]string{}); err == nil {
		t.Fatal("a ConfigMap without reloaderOptions was accepted")
	}
}

func FuzzParseMetaInfo(f *testing.F) {
	e, _ := json.Marshal(DefaultOptions().effective(&Resolved{}))
	f.Add(string(e), `{"name":"reloader","namespace":"ops"}`)
	f.Add(`{"namespaces":[""],"reloadMinInterval":"-1s"}`, `{}`)
	f.Fuzz(func(t *testing.T, opts, dep string) {
		mi, err := parseMetaInfo("ops", map[string]string{"reloaderOptions": opts, "deploymentInfo": dep})
		if err != nil {
			return
		}
		// Whatever was published, Resolve validates it like flags; it must
		// not panic.
		_, _ = mi.options.Resolve(func(string) string { return "" })
	})
}

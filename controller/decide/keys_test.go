package decide

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/workload"
)

// testKeys digests under a fixed key, as the controller's cache does under
// its installation's key.
var testKeys = func() hash.KeyDigester {
	d, err := hash.Keyed([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	return d
}()

// keyedWorkload is a Deployment whose container reads app-config's
// LOG_LEVEL through a configMapKeyRef and the Secret creds through envFrom.
func keyedWorkload(t *testing.T, meta map[string]string, env ...corev1.EnvVar) workload.View {
	t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", UID: "u1", ResourceVersion: "100",
		CreationTimestamp: metav1.NewTime(created), Annotations: meta}}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app",
		Env: append([]corev1.EnvVar{{Name: "LOG_LEVEL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}, Key: "LOG_LEVEL"}}}}, env...),
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}}},
	}}
	v, err := workload.ViewOf(d)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func cmState(data map[string]string) State {
	st := existing(hash.SHA1.ConfigMap(data, nil))
	st.Keys = testKeys.ConfigMapKeys(data, nil)
	return st
}

func secretState(data map[string]string) State {
	b := map[string][]byte{}
	for k, v := range data {
		b[k] = []byte(v)
	}
	st := existing(hash.SHA1.Secret(b))
	st.Keys = testKeys.SecretKeys(b)
	return st
}

var (
	cmV1        = map[string]string{"LOG_LEVEL": "info", "URL": "http://a"}
	cmOtherKey  = map[string]string{"LOG_LEVEL": "info", "URL": "http://b"}
	cmUsedKey   = map[string]string{"LOG_LEVEL": "debug", "URL": "http://a"}
	sV1         = map[string]string{"password": "p1", "user": "u"}
	sOtherKey   = map[string]string{"password": "p1", "user": "v"}
	sUsedKey    = map[string]string{"password": "p2", "user": "u"}
	logLevelKey = []string{"LOG_LEVEL"}
)

// recordOf is the record a workload carries for app-config and creds.
func recordOf(cm, s string) string {
	b, _ := json.Marshal(map[string]string{"configmap/app-config": cm, "secret/creds": s})
	return string(b)
}

func reloaded(d Decision) []string {
	var out []string
	for _, r := range d.Reloads {
		out = append(out, r.String())
	}
	return out
}

func TestPerKeyReloads(t *testing.T) {
	cmKeys := func(data map[string]string) string {
		return testKeys.ConfigMapKeys(data, nil).Subset(hash.SHA1, logLevelKey)
	}
	cmUnkeyed := func(data map[string]string) string {
		return testKeys.ConfigMapKeys(data, nil).UnkeyedSubset(hash.SHA1, logLevelKey)
	}
	cmWhole := func(data map[string]string) string { return hash.SHA1.ConfigMap(data, nil) }
	sWhole := func(data map[string]string) string { return secretState(data).Hash }
	sKeys := func(data map[string]string) string {
		return secretState(data).Keys.Subset(hash.SHA1, []string{"password"})
	}
	for _, tc := range []struct {
		name        string
		flag        bool
		meta        map[string]string
		cm, s       map[string]string
		record      string
		wantReloads []string
		wantRecord  string // "" when unchanged
	}{
		{name: "a change to an unused key rolls nothing and leaves the record", flag: true, cm: cmOtherKey, s: sV1,
			record: recordOf(cmKeys(cmV1), sWhole(sV1))},
		{name: "a change to a used key reloads", flag: true, cm: cmUsedKey, s: sV1,
			record: recordOf(cmKeys(cmV1), sWhole(sV1)), wantReloads: []string{"configmap/app-config"},
			wantRecord: recordOf(cmKeys(cmUsedKey), sWhole(sV1))},
		{name: "envFrom reads every key: any change reloads", flag: true, cm: cmV1, s: sOtherKey,
			record: recordOf(cmKeys(cmV1), sWhole(sV1)), wantReloads: []string{"secret/creds"},
			wantRecord: recordOf(cmKeys(cmV1), sWhole(sOtherKey))},
		{name: "the keys annotation scopes an envFrom use", flag: true, meta: with(names.SecretKeys, "creds/password"),
			cm: cmV1, s: sOtherKey, record: recordOf(cmKeys(cmV1), sKeys(sV1))},
		{name: "the keys annotation: a listed key reloads", flag: true, meta: with(names.SecretKeys, "creds/password"),
			cm: cmV1, s: sUsedKey, record: recordOf(cmKeys(cmV1), sKeys(sV1)), wantReloads: []string{"secret/creds"},
			wantRecord: recordOf(cmKeys(cmV1), sKeys(sUsedKey))},
		{name: "off by default: an unused key reloads as before", cm: cmOtherKey, s: sV1,
			record: recordOf(cmWhole(cmV1), sWhole(sV1)), wantReloads: []string{"configmap/app-config"},
			wantRecord: recordOf(cmWhole(cmOtherKey), sWhole(sV1))},
		{name: "the workload's annotation turns it on against the flag", meta: with(names.UsedKeysOnly, "true"), cm: cmOtherKey, s: sV1,
			record: recordOf(cmKeys(cmV1), sWhole(sV1))},
		{name: "the workload's annotation turns it off against the flag", flag: true, meta: with(names.UsedKeysOnly, "false"), cm: cmOtherKey, s: sV1,
			record: recordOf(cmWhole(cmV1), sWhole(sV1)), wantReloads: []string{"configmap/app-config"},
			wantRecord: recordOf(cmWhole(cmOtherKey), sWhole(sV1))},
		{name: "turning it on adopts an up-to-date workload: only the record changes", flag: true, cm: cmV1, s: sV1,
			record: recordOf(cmWhole(cmV1), sWhole(sV1)), wantRecord: recordOf(cmKeys(cmV1), sWhole(sV1))},
		{name: "turning it off adopts an up-to-date workload: only the record changes", cm: cmOtherKey, s: sV1,
			record: recordOf(cmKeys(cmV1), sWhole(sV1)), wantRecord: recordOf(cmWhole(cmOtherKey), sWhole(sV1))},
		{name: "turning it on when a used key changed meanwhile reloads once", flag: true, cm: cmUsedKey, s: sV1,
			record: recordOf(cmWhole(cmV1), sWhole(sV1)), wantReloads: []string{"configmap/app-config"},
			wantRecord: recordOf(cmKeys(cmUsedKey), sWhole(sV1))},
		{name: "a record of unkeyed digests (earlier releases) is adopted: only the record changes", flag: true, cm: cmOtherKey, s: sV1,
			record: recordOf(cmUnkeyed(cmV1), sWhole(sV1)), wantRecord: recordOf(cmKeys(cmOtherKey), sWhole(sV1))},
		{name: "a record of unkeyed digests is adopted with the mode turned off at once", cm: cmV1, s: sV1,
			record: recordOf(cmUnkeyed(cmV1), sWhole(sV1)), wantRecord: recordOf(cmWhole(cmV1), sWhole(sV1))},
		{name: "a record of unkeyed digests whose used key changed meanwhile reloads once", flag: true, cm: cmUsedKey, s: sV1,
			record: recordOf(cmUnkeyed(cmV1), sWhole(sV1)), wantReloads: []string{"configmap/app-config"},
			wantRecord: recordOf(cmKeys(cmUsedKey), sWhole(sV1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meta := with(names.Auto, "true")
			for k, v := range tc.meta {
				meta[k] = v
			}
			meta["reloader.dev/applied-hashes"] = tc.record
			r := &testReader{states: map[Resource]State{appCM: cmState(tc.cm), creds: secretState(tc.s)}}
			d := Decide(Options{UsedKeysOnly: tc.flag}, keyedWorkload(t, meta), r, now)
			if got := reloaded(d); !slices.Equal(got, tc.wantReloads) {
				t.Errorf("reloads = %v, want %v", got, tc.wantReloads)
			}
			want := tc.wantRecord
			if want == "" {
				want = tc.record
			}
			if d.NextRecord != want {
				t.Errorf("next record = %s, want %s", d.NextRecord, want)
			}
			if len(tc.wantReloads) == 0 && (d.Change.Rollout() || len(d.Change.Env) > 0 || len(d.Change.TemplateAnnotations) > 0) {
				t.Errorf("the pod template changes: %+v", d.Change)
			}
			if len(d.Problems) > 0 {
				t.Errorf("problems: %v", d.Problems)
			}
		})
	}
}

// A workload migrated from the original carries no record, only its
// STAKATER_* variable holding the whole hash: per-key mode adopts it.
func TestPerKeyModeAdoptsAReloadMarkerOfTheWholeHash(t *testing.T) {
	marker := corev1.EnvVar{Name: EnvVarName(appCM.Kind, appCM.Name), Value: hash.SHA1.ConfigMap(cmV1, nil)}
	sMarker := corev1.EnvVar{Name: EnvVarName(creds.Kind, creds.Name), Value: secretState(sV1).Hash}
	r := &testReader{states: map[Resource]State{appCM: cmState(cmV1), creds: secretState(sV1)}}
	d := Decide(Options{UsedKeysOnly: true}, keyedWorkload(t, with(names.Auto, "true"), marker, sMarker), r, now)
	if len(d.Reloads) > 0 || len(d.Skips) > 0 {
		t.Errorf("reloads %v, skips %v: want none", d.Reloads, d.Skips)
	}
	if !d.RecordOnly || !strings.Contains(d.NextRecord, testKeys.ConfigMapKeys(cmV1, nil).Subset(hash.SHA1, logLevelKey)) {
		t.Errorf("record-only %v, next record %s: want the subset hash recorded", d.RecordOnly, d.NextRecord)
	}
}

func TestKeyScopesSayWhy(t *testing.T) {
	r := &testReader{states: map[Resource]State{appCM: cmState(cmV1), creds: secretState(sV1)}}
	d := Decide(Options{UsedKeysOnly: true}, keyedWorkload(t, with(names.Auto, "true")), r, now)
	scopes := map[Resource]KeyScope{}
	for _, w := range d.Watched {
		scopes[w.Resource] = w.Scope
	}
	if s := scopes[appCM]; !s.PerKey || !slices.Equal(s.Keys, logLevelKey) || !strings.Contains(s.Why, "env keyRef") {
		t.Errorf("app-config scope = %+v", s)
	}
	if s := scopes[creds]; s.PerKey || !strings.Contains(s.Why, "envFrom") || !strings.Contains(s.Why, names.SecretKeys) {
		t.Errorf("creds scope = %+v", s)
	}
	// Listed keys count with those the uses name.
	d = Decide(Options{UsedKeysOnly: true}, keyedWorkload(t, with(names.Auto, "true", names.ConfigMapKeys, "app-config/URL")), r, now)
	for _, w := range d.Watched {
		if w.Resource == appCM && (!slices.Equal(w.Scope.Keys, []string{"LOG_LEVEL", "URL"}) || !strings.Contains(w.Scope.Why, "listed by "+names.ConfigMapKeys)) {
			t.Errorf("app-config scope with a listing = %+v", w.Scope)
		}
	}
	d = Decide(Options{}, keyedWorkload(t, with(names.Auto, "true")), r, now)
	for _, w := range d.Watched {
		if w.Scope.PerKey || !strings.Contains(w.Scope.Why, "per-key reloads are off (--reload-on-used-keys-only)") {
			t.Errorf("%s scope with the mode off = %+v", w.Resource, w.Scope)
		}
	}
}

// Invalid values are problems (a ReloadFail Event and
// reloader_invalid_annotations_total), never a crash; the valid parts count.
func TestInvalidKeyAnnotationsAreProblems(t *testing.T) {
	r := &testReader{states: map[Resource]State{appCM: cmState(cmV1), creds: secretState(sOtherKey)}}
	meta := with(names.Auto, "true", names.UsedKeysOnly, "yes", names.SecretKeys, "creds/password,bad",
		"reloader.dev/applied-hashes", recordOf(testKeys.ConfigMapKeys(cmV1, nil).Subset(hash.SHA1, logLevelKey), secretState(sV1).Keys.Subset(hash.SHA1, []string{"password"})))
	d := Decide(Options{UsedKeysOnly: true}, keyedWorkload(t, meta), r, now)
	if len(d.Problems) != 2 {
		t.Errorf("problems = %q, want the boolean and the entry", d.Problems)
	}
	if len(d.Reloads) > 0 {
		t.Errorf("reloads = %v: the flag decides and the valid entry counts", d.Reloads)
	}
}

// The decision's side of per-key reloads: one sync's Decide with the mode
// off (the KeyUses walk and the other formula's hash) and on.
func BenchmarkDecidePerKey(b *testing.B) {
	t := &testing.T{}
	r := &testReader{states: map[Resource]State{appCM: cmState(cmV1), creds: secretState(sV1)}}
	v := keyedWorkload(t, with(names.Auto, "true", "reloader.dev/applied-hashes", recordOf("c", "s")))
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Decide(Options{UsedKeysOnly: on}, v, r, now)
			}
		})
	}
}

package decide

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/refs"
)

// at is a ConfigMap or Secret state with content h at resourceVersion rv.
func at(h, rv string) State {
	st := existing(h)
	st.ResourceVersion = rv
	return st
}

// versionsText is the versions annotation for entry/version/hash triples.
func versionsText(t *testing.T, triples ...string) string {
	t.Helper()
	m := map[string]string{}
	for i := 0; i+2 < len(triples); i += 3 {
		m[triples[i]] = triples[i+1] + "/" + bindOf(triples[i+2])
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The guarantee: a decision made from an older view of a resource than the
// version already applied to the workload writes nothing, whatever else it
// would do; from the same or a newer view it writes, and records the version
// it read.
func TestAnOlderViewThanTheRecordWritesNothing(t *testing.T) {
	const newer = `{"configmap/app-config":"c2","secret/creds":"s1"}`
	cases := []struct {
		name     string
		o        Options
		record   string
		versions string
		states   map[Resource]State
		stale    string // "res", sorted; "" when the decision writes
		reloads  string
		// versionsOut is the versions annotation the decision would write
		// (only checked when it writes).
		versionsOut map[string]string
	}{
		{name: "a lagging cache of the ConfigMap would roll the workload back: no write",
			record: newer, versions: versionsText(t, "configmap/app-config", "20", "c2", "secret/creds", "5", "s1"),
			states: map[Resource]State{appCM: at("c1", "10"), creds: at("s1", "5")},
			stale:  "configmap/app-config", reloads: "configmap/app-config changed"},
		{name: "one lagging resource holds the whole write, even a forward change of another",
			record: newer, versions: versionsText(t, "configmap/app-config", "20", "c2", "secret/creds", "5", "s1"),
			states: map[Resource]State{appCM: at("c1", "10"), creds: at("s2", "30")},
			stale:  "configmap/app-config", reloads: "configmap/app-config changed,secret/creds changed"},
		{name: "a newer view reloads and records the version it read",
			record: newer, versions: versionsText(t, "configmap/app-config", "20", "c2", "secret/creds", "5", "s1"),
			states:  map[Resource]State{appCM: at("c3", "40"), creds: at("s1", "5")},
			reloads: "configmap/app-config changed", versionsOut: map[string]string{"configmap/app-config": "40/c3", "secret/creds": "5/s1"}},
		{name: "the same version is no older: nothing to do, nothing stale",
			record: newer, versions: versionsText(t, "configmap/app-config", "20", "c2", "secret/creds", "5", "s1"),
			states: map[Resource]State{appCM: at("c2", "20"), creds: at("s1", "5")}},
		{name: "a version bound to another hash (written by an older controller) is not used",
			record: newer, versions: versionsText(t, "configmap/app-config", "20", "c9", "secret/creds", "5", "s1"),
			states:  map[Resource]State{appCM: at("c1", "10"), creds: at("s1", "5")},
			reloads: "configmap/app-config changed", versionsOut: map[string]string{"configmap/app-config": "10/c1", "secret/creds": "5/s1"}},
		{name: "versions that do not parse as the apiserver's are not judged",
			record: newer, versions: versionsText(t, "configmap/app-config", "x20", "c2"),
			states:  map[Resource]State{appCM: at("c1", "10"), creds: at("s1", "5")},
			reloads: "configmap/app-config changed"},
		{name: "a deletion applied: a view still holding the last version seen is stale",
			o:      Options{ReloadOnCreate: true, ReloadOnDelete: true},
			record: `{"configmap/app-config":"","secret/creds":"s1"}`, versions: versionsText(t, "configmap/app-config", "20", "", "secret/creds", "5", "s1"),
			states: map[Resource]State{appCM: at("c2", "20"), creds: at("s1", "5")},
			stale:  "configmap/app-config", reloads: "configmap/app-config created"},
		{name: "a deletion applied, then the ConfigMap recreated: a newer version, reloaded",
			o:      Options{ReloadOnCreate: true, ReloadOnDelete: true},
			record: `{"configmap/app-config":"","secret/creds":"s1"}`, versions: versionsText(t, "configmap/app-config", "20", "", "secret/creds", "5", "s1"),
			states:  map[Resource]State{appCM: at("c3", "45"), creds: at("s1", "5")},
			reloads: "configmap/app-config created", versionsOut: map[string]string{"configmap/app-config": "45/c3", "secret/creds": "5/s1"}},
		{name: "a deletion is recorded with the last version seen to exist",
			o:      Options{ReloadOnDelete: true, Strategy: Annotations},
			record: newer, versions: versionsText(t, "configmap/app-config", "20", "c2", "secret/creds", "5", "s1"),
			states:  map[Resource]State{creds: at("s1", "5")},
			reloads: "configmap/app-config deleted", versionsOut: map[string]string{"configmap/app-config": "20/", "secret/creds": "5/s1"}},
		{name: "an unversioned record (today's) is judged as before and gains versions with its next write",
			record: newer, states: map[Resource]State{appCM: at("c3", "40"), creds: at("s1", "5")},
			reloads: "configmap/app-config changed", versionsOut: map[string]string{"configmap/app-config": "40/c3", "secret/creds": "5/s1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			meta := with(names.Auto, "true", annotations.Applied, tc.record)
			if tc.versions != "" {
				meta[annotations.AppliedVersions] = tc.versions
			}
			tc.o.Names = names
			d := Decide(tc.o, deployment(t, meta), &testReader{states: tc.states}, now)
			var stale, reloads []string
			for _, s := range d.Stale {
				stale = append(stale, s.Resource.String())
			}
			for _, r := range d.Reloads {
				reloads = append(reloads, r.String()+" "+r.Change.String())
			}
			if got := strings.Join(stale, ","); got != tc.stale {
				t.Errorf("stale %q, want %q", got, tc.stale)
			}
			if got := strings.Join(reloads, ","); got != tc.reloads {
				t.Errorf("reloads %q, want %q", got, tc.reloads)
			}
			if tc.stale != "" {
				if d.Change.Rollout() || d.Change.Record != "" || d.RecordOnly {
					t.Errorf("a stale decision must write nothing: change %+v, record-only %v", d.Change, d.RecordOnly)
				}
				return
			}
			if tc.reloads == "" {
				if d.RecordOnly || d.Change.Rollout() {
					t.Errorf("nothing changed: want no write, got change %+v, record-only %v", d.Change, d.RecordOnly)
				}
				return
			}
			if !d.Change.Rollout() {
				t.Fatalf("want a rollout, got %+v", d.Change)
			}
			got := d.Change.MetaAnnotations[annotations.AppliedVersions]
			if got == nil {
				t.Fatalf("the reload does not write %s: %+v", annotations.AppliedVersions, d.Change.MetaAnnotations)
			}
			if tc.versionsOut != nil {
				want, _ := json.Marshal(tc.versionsOut)
				if *got != string(want) {
					t.Errorf("versions written %s, want %s", *got, want)
				}
			}
		})
	}
}

// A change of a ConfigMap's metadata alone moves its resourceVersion but not
// its content: no write, so labels and GitOps annotations on ConfigMaps cost
// the workloads nothing.
func TestAVersionWithTheSameContentWritesNothing(t *testing.T) {
	meta := with(names.Auto, "true", annotations.Applied, recorded,
		annotations.AppliedVersions, versionsText(t, "configmap/app-config", "20", "c1", "secret/creds", "5", "s1"))
	d := Decide(Options{Names: names}, deployment(t, meta), &testReader{states: map[Resource]State{appCM: at("c1", "25"), creds: at("s1", "5")}}, now)
	if len(d.Stale) > 0 || len(d.Reloads) > 0 || d.RecordOnly {
		t.Errorf("want nothing to write, got stale %v, reloads %v, record-only %v", d.Stale, d.Reloads, d.RecordOnly)
	}
}

// Migration: today's record (no versions) and stakater's variables roll
// nothing and write nothing while nothing changes.
func TestMigrationToVersionedRecordsRollsNothing(t *testing.T) {
	states := map[Resource]State{appCM: at("c1", "20"), creds: at("s1", "5")}
	t.Run("today's record", func(t *testing.T) {
		d := Decide(Options{Names: names}, deployment(t, with(names.Auto, "true", annotations.Applied, recorded)), &testReader{states: states}, now)
		if len(d.Stale) > 0 || len(d.Reloads) > 0 || d.RecordOnly || d.Change.Rollout() {
			t.Errorf("want no write, got stale %v, reloads %v, record-only %v", d.Stale, d.Reloads, d.RecordOnly)
		}
	})
	t.Run("stakater's variables", func(t *testing.T) {
		// stakater wrote STAKATER_<NAME>_<KIND> with the SHA-1 of the data
		// it applied; here the caches hold that same content.
		cm := hash.SHA1.ConfigMap(map[string]string{"k": "v"}, nil)
		sec := hash.SHA1.Secret(map[string][]byte{"p": []byte("w")})
		v := deployment(t, with(names.Auto, "true"),
			corev1.EnvVar{Name: EnvVarName(refs.ConfigMap, "app-config"), Value: cm},
			corev1.EnvVar{Name: EnvVarName(refs.Secret, "creds"), Value: sec})
		d := Decide(Options{Names: names}, v, &testReader{states: map[Resource]State{appCM: at(cm, "20"), creds: at(sec, "5")}}, now)
		if len(d.Stale) > 0 || len(d.Reloads) > 0 || d.Change.Rollout() {
			t.Fatalf("want no reload, got stale %v, reloads %v", d.Stale, d.Reloads)
		}
		// The adoption record is written once, without rolling, and with
		// the versions it was read at.
		if !d.RecordOnly {
			t.Fatalf("want the adoption record written")
		}
		got := d.RecordChange().MetaAnnotations[annotations.AppliedVersions]
		want := versionsText(t, "configmap/app-config", "20", cm, "secret/creds", "5", sec)
		if got == nil || *got != want {
			t.Errorf("adoption versions %v, want %s", got, want)
		}
	})
}

// An unreadable versions annotation (edited by hand) is a problem to report;
// the decision judges as if there were none.
func TestUnreadableVersionsAreAProblemNotAnOutage(t *testing.T) {
	meta := with(names.Auto, "true", annotations.Applied, recorded, annotations.AppliedVersions, "{not json")
	d := Decide(Options{Names: names}, deployment(t, meta), &testReader{states: map[Resource]State{appCM: at("c2", "20"), creds: at("s1", "5")}}, now)
	if !strings.Contains(strings.Join(d.Problems, ";"), annotations.AppliedVersions) {
		t.Errorf("problems %q, want one naming %s", d.Problems, annotations.AppliedVersions)
	}
	if len(d.Reloads) != 1 || len(d.Stale) != 0 {
		t.Errorf("want the change reloaded as before versions, got reloads %v, stale %v", d.Reloads, d.Stale)
	}
}

// The versions annotation is written by anyone who can edit the workload.
func FuzzParseVersions(f *testing.F) {
	f.Add(`{"configmap/a":"12/abc"}`)
	f.Add(`{"configmap/a":"/"}`)
	f.Add(`[]`)
	f.Add(strings.Repeat("{", 1000))
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseVersions(s)
		if err != nil && len(m) != 0 {
			t.Fatalf("an error must come with no entries, got %v", m)
		}
		for _, val := range m {
			rv, bound, _ := strings.Cut(val, "/")
			_ = older(rv, bound)
		}
	})
}

package decide

import (
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// testReader is a Reader over states given by the test, all in the
// workload's namespace.
type testReader struct {
	states     map[Resource]State
	births     map[workload.Key]Birth
	namespaces map[string]map[string]string
}

func (r *testReader) Resource(k refs.Kind, _, name string) State { return r.states[Resource{k, name}] }

func (r *testReader) Names(k refs.Kind, _ string) []string {
	var out []string
	for res, st := range r.states {
		if res.Kind == k && st.Exists {
			out = append(out, res.Name)
		}
	}
	slices.Sort(out)
	return out
}

func (r *testReader) Birth(k workload.Key) (Birth, bool) { b, ok := r.births[k]; return b, ok }

func (r *testReader) NamespaceLabels(ns string) (map[string]string, bool) {
	l, ok := r.namespaces[ns]
	return l, ok
}

var (
	names   = annotations.Defaults()
	created = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	now     = created.Add(time.Hour)
	appCM   = Resource{refs.ConfigMap, "app-config"}
	creds   = Resource{refs.Secret, "creds"}
)

// deployment is a Deployment in "apps" whose container "app" uses the
// ConfigMap app-config and the Secret creds through envFrom.
func deployment(t *testing.T, meta map[string]string, env ...corev1.EnvVar) workload.View {
	t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "apps", UID: "u1", ResourceVersion: "100",
		CreationTimestamp: metav1.NewTime(created), Annotations: meta}}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Env: env, EnvFrom: []corev1.EnvFromSource{
		{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}},
		{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}},
	}}}
	v, err := workload.ViewOf(d)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func existing(h string) State {
	return State{Hash: h, Exists: true, ResourceVersion: "50", Created: created.Add(-time.Hour), Written: created.Add(-time.Hour)}
}

// with merges annotations.
func with(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

const recorded = `{"configmap/app-config":"c1","secret/creds":"s1"}`

// The reload rules, one table: each case is a workload's annotations and
// what the caches hold, and the reloads and skips Decide makes of them.
func TestTheReloadRulesThroughDecide(t *testing.T) {
	bothChanged := map[Resource]State{appCM: existing("c2"), creds: existing("s2")}
	cases := []struct {
		name    string
		o       Options
		meta    map[string]string
		states  map[Resource]State
		births  map[workload.Key]Birth
		gate    Gate
		watched string // "res", sorted
		reloads string // "res change", sorted
		skips   string // "res reason", sorted
		problem string // a substring of the problems
	}{
		{name: "auto watches everything used and reloads what changed",
			meta: with(names.Auto, "true", annotations.Applied, recorded), states: bothChanged,
			watched: "configmap/app-config,secret/creds", reloads: "configmap/app-config changed,secret/creds changed"},
		{name: "typed auto watches only its kind",
			meta: with(names.SecretAuto, "true", annotations.Applied, recorded), states: bothChanged,
			watched: "secret/creds", reloads: "secret/creds changed"},
		{name: "a named reload watches only the names it lists",
			meta: with(names.ConfigMapReload, "app-.*", annotations.Applied, recorded), states: bothChanged,
			watched: "configmap/app-config", reloads: "configmap/app-config changed"},
		{name: "a named reload watches a resource the pod spec does not use",
			meta:    with(names.ConfigMapReload, "flags", annotations.Applied, `{"configmap/*":"flags","configmap/flags":"f1"}`),
			states:  map[Resource]State{{refs.ConfigMap, "flags"}: existing("f2")},
			watched: "configmap/flags", reloads: "configmap/flags changed"},
		{name: "search watches only resources carrying match",
			meta:    with(names.Search, "true", annotations.Applied, recorded),
			states:  map[Resource]State{appCM: {Hash: "c2", Exists: true, Annotations: with(names.Match, "true")}, creds: existing("s2")},
			watched: "configmap/app-config", reloads: "configmap/app-config changed"},
		{name: "ignore on the resource is never watched",
			meta:    with(names.Auto, "true", annotations.Applied, recorded),
			states:  map[Resource]State{appCM: {Hash: "c2", Exists: true, Annotations: with(names.Ignore, "true")}, creds: existing("s1")},
			watched: "secret/creds"},
		{name: "an excluded name is never watched",
			meta: with(names.Auto, "true", names.ConfigMapExclude, "app-config", annotations.Applied, recorded), states: bothChanged,
			watched: "secret/creds", reloads: "secret/creds changed"},
		{name: "an invalid reload list is a problem, the valid entries still match",
			meta: with(names.ConfigMapReload, "(,app-config", annotations.Applied, recorded), states: bothChanged,
			watched: "configmap/app-config", reloads: "configmap/app-config changed", problem: "invalid regular expression"},
		{name: "no annotation: not interested",
			meta: with(annotations.Applied, recorded), states: bothChanged, gate: GateNotInterested},
		{name: "auto-reload-all opts every workload in", o: Options{AutoReloadAll: true},
			meta: with(annotations.Applied, recorded), states: bothChanged,
			watched: "configmap/app-config,secret/creds", reloads: "configmap/app-config changed,secret/creds changed"},
		{name: "an ignored namespace stops at the gate", o: Options{NamespacesToIgnore: []string{"apps"}},
			meta: with(names.Auto, "true", annotations.Applied, recorded), states: bothChanged, gate: GateNamespace,
			watched: "configmap/app-config,secret/creds", reloads: "configmap/app-config changed,secret/creds changed"},
		{name: "an unselected namespace stops at the gate", o: Options{NamespaceSelector: labels.SelectorFromSet(labels.Set{"team": "a"})},
			meta: with(names.Auto, "true", annotations.Applied, recorded), states: bothChanged, gate: GateNamespace,
			watched: "configmap/app-config,secret/creds", reloads: "configmap/app-config changed,secret/creds changed"},
		{name: "an ignored kind is not watched", o: Options{IgnoreSecrets: true},
			meta: with(names.Auto, "true", annotations.Applied, recorded), states: bothChanged,
			watched: "configmap/app-config", reloads: "configmap/app-config changed"},
		{name: "first sight of a workload found in the initial list adopts the current content",
			meta: with(names.Auto, "true"), states: bothChanged,
			watched: "configmap/app-config,secret/creds", skips: "configmap/app-config adopted_baseline,secret/creds adopted_baseline"},
		{name: "first sight of a workload seen being created rolls what was written after it",
			meta:    with(names.Auto, "true"),
			states:  map[Resource]State{appCM: {Hash: "c2", Exists: true, ResourceVersion: "101", Created: created.Add(-time.Hour), Written: created}, creds: existing("s1")},
			births:  map[workload.Key]Birth{{Kind: workload.Deployment, Namespace: "apps", Name: "web"}: {UID: "u1", ResourceVersion: "100"}},
			watched: "configmap/app-config,secret/creds", reloads: "configmap/app-config changed", skips: "secret/creds adopted_baseline"},
		{name: "a created resource is skipped unless --reload-on-create",
			meta:    with(names.Auto, "true", annotations.Applied, `{"configmap/app-config":"","secret/creds":"s1"}`),
			states:  map[Resource]State{appCM: existing("c1"), creds: existing("s1")},
			watched: "configmap/app-config,secret/creds", skips: "configmap/app-config reload_on_create_disabled"},
		{name: "a deleted resource reloads under --reload-on-delete", o: Options{ReloadOnDelete: true},
			meta: with(names.Auto, "true", annotations.Applied, recorded), states: map[Resource]State{creds: existing("s1")},
			watched: "configmap/app-config,secret/creds", reloads: "configmap/app-config deleted",
			skips: "configmap/app-config no_variable_to_remove", problem: `uses ConfigMap "app-config", which does not exist`},
		{name: "a bad pause period is a problem",
			meta: with(names.Auto, "true", names.PausePeriod, "soon", annotations.Applied, recorded), states: bothChanged,
			watched: "configmap/app-config,secret/creds", reloads: "configmap/app-config changed,secret/creds changed", problem: names.PausePeriod},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &testReader{states: tc.states, births: tc.births, namespaces: map[string]map[string]string{"apps": {"team": "b"}}}
			d := Decide(tc.o, deployment(t, tc.meta), r, now)
			if d.Gate != tc.gate {
				t.Errorf("gate %v, want %v", d.Gate, tc.gate)
			}
			var ws, rs, ss []string
			for _, w := range d.Watched {
				ws = append(ws, w.String())
			}
			for _, rl := range d.Reloads {
				rs = append(rs, rl.String()+" "+rl.Change.String())
			}
			for _, s := range d.Skips {
				ss = append(ss, s.String()+" "+s.Reason)
			}
			if tc.gate != GateNotInterested {
				if got := strings.Join(ws, ","); got != tc.watched {
					t.Errorf("watched %q, want %q", got, tc.watched)
				}
			}
			if got := strings.Join(rs, ","); got != tc.reloads {
				t.Errorf("reloads %q, want %q", got, tc.reloads)
			}
			if got := strings.Join(ss, ","); got != tc.skips {
				t.Errorf("skips %q, want %q", got, tc.skips)
			}
			if got := strings.Join(d.Problems, "; "); tc.problem == "" && got != "" || !strings.Contains(got, tc.problem) {
				t.Errorf("problems %q, want %q", got, tc.problem)
			}
		})
	}
}

// The two strategies carry the same reload differently: a variable on the
// container that uses the resource, or last-reloaded-from on the template.
func TestEachStrategyCarriesTheReloadItsWay(t *testing.T) {
	for _, tc := range []struct {
		strategy        Strategy
		env, annotation bool
	}{{EnvVars, true, false}, {Annotations, false, true}} {
		t.Run(string(tc.strategy), func(t *testing.T) {
			r := &testReader{states: map[Resource]State{appCM: existing("c2"), creds: existing("s1")}}
			d := Decide(Options{Strategy: tc.strategy}, deployment(t, with(names.Auto, "true", annotations.Applied, recorded)), r, now)
			if len(d.Applied) != 1 || !d.Change.Rollout() {
				t.Fatalf("applied %v, change %+v; want one rolling reload", d.Applied, d.Change)
			}
			if got := len(d.Change.Env) == 1 && d.Change.Env[0].Name == "STAKATER_APP_CONFIG_CONFIGMAP" && d.Change.Env[0].Value == "c2"; got != tc.env {
				t.Errorf("env %+v, want the variable %v", d.Change.Env, tc.env)
			}
			if _, got := d.Change.TemplateAnnotations[names.LastReloadedFrom]; got != tc.annotation {
				t.Errorf("template annotations %v, want last-reloaded-from %v", d.Change.TemplateAnnotations, tc.annotation)
			}
			if d.NextRecord != `{"configmap/app-config":"c2","secret/creds":"s1"}` {
				t.Errorf("next record %s", d.NextRecord)
			}
		})
	}
}

// A marker left by either strategy, or by the original, is what was applied:
// a workload up to date is not rolled on first sight.
func TestAReloadMarkerIsTheBaselineOnFirstSight(t *testing.T) {
	r := &testReader{states: map[Resource]State{appCM: existing("c2"), creds: existing("s1")}}
	v := deployment(t, with(names.Auto, "true"), corev1.EnvVar{Name: "STAKATER_APP_CONFIG_CONFIGMAP", Value: "c2"})
	d := Decide(Options{}, v, r, now)
	if len(d.Reloads) != 0 || !d.RecordOnly {
		t.Fatalf("reloads %v, record only %v; want the baseline recorded", d.Reloads, d.RecordOnly)
	}
	if w := d.Watched[0]; w.Baseline != (Baseline{"c2", true, FromMarker}) {
		t.Fatalf("baseline %+v, want c2 from the marker", w.Baseline)
	}
}

// Storm control holds a reload until the interval since the last one has
// passed; the hold is part of the decision, the wait the sync's.
func TestStormControlHoldsAReloadUntilTheIntervalHasPassed(t *testing.T) {
	r := &testReader{states: map[Resource]State{appCM: existing("c2"), creds: existing("s1")}}
	last := now.Add(-20 * time.Second).Format(time.RFC3339Nano)
	v := deployment(t, with(names.Auto, "true", annotations.Applied, recorded, LastReload, last))
	d := Decide(Options{MinReloadInterval: time.Minute}, v, r, now)
	if d.HeldFor != 40*time.Second {
		t.Fatalf("held for %s, want 40s", d.HeldFor)
	}
}

// A Deployment this controller paused stays paused for its period, then is
// resumed; a reload with a pause period pauses it.
func TestAPausePeriodPausesThenResumes(t *testing.T) {
	r := &testReader{states: map[Resource]State{appCM: existing("c2"), creds: existing("s1")}}
	d := Decide(Options{}, deployment(t, with(names.Auto, "true", names.PausePeriod, "5m", annotations.Applied, recorded)), r, now)
	if d.Change.Paused == nil || !*d.Change.Paused || d.Change.MetaAnnotations[names.PausedAt] == nil {
		t.Fatalf("change %+v, want the Deployment paused with %s", d.Change, names.PausedAt)
	}
	paused := func(at time.Time) workload.View {
		v := deployment(t, with(names.Auto, "true", names.PausePeriod, "5m", names.PausedAt, at.Format(time.RFC3339), annotations.Applied, recorded))
		v.Object.(*appsv1.Deployment).Spec.Paused = true
		return v
	}
	if d := Decide(Options{}, paused(now.Add(-time.Minute)), r, now); d.PausedFor != 4*time.Minute || d.Resume != nil {
		t.Fatalf("paused for %s, resume %v; want 4m and no resume", d.PausedFor, d.Resume)
	}
	if d := Decide(Options{}, paused(now.Add(-time.Hour)), r, now); d.PausedFor != 0 || d.Resume == nil || d.Resume.Paused == nil || *d.Resume.Paused {
		t.Fatalf("paused for %s, resume %+v; want it resumed", d.PausedFor, d.Resume)
	}
}

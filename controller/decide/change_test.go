package decide

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// buildChange turns planned reloads into the one write a sync makes; it
// decides everything apply then only carries out.
func TestBuildChange(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	names := annotations.Defaults()
	deploy := func(meta map[string]string, paused bool, env ...corev1.EnvVar) workload.View {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Annotations: meta}}
		d.Spec.Paused = paused
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", Env: env, EnvFrom: []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}}}}
		v, err := workload.ViewOf(d)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	rollout := func(meta map[string]string) workload.View {
		r := &workload.Custom{TypeMeta: metav1.TypeMeta{Kind: string(workload.Rollout)}, ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Annotations: meta}}
		r.Template.Spec.Containers = []corev1.Container{{Name: "app"}}
		v, err := workload.ViewOf(r)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cm := Resource{refs.ConfigMap, "app-config"}
	other := Resource{refs.ConfigMap, "unused"}
	cases := []struct {
		name        string
		o           Options
		v           workload.View
		reloads     []Reload
		env         string // "container/NAME=value" or "-NAME" for a removal
		annotation  bool   // last-reloaded-from set on the template
		paused      bool
		meta        string // metadata annotation keys set, sorted
		applied     int
		skips       string
		noContainer int
		restart     bool
	}{
		{name: "env-vars sets the variable on the container using it", o: Options{Strategy: EnvVars},
			v: deploy(nil, false), reloads: []Reload{{Watched{Resource: cm, Hash: "h2", Auto: true}, Changed}},
			env: "app/STAKATER_APP_CONFIG_CONFIGMAP=h2", applied: 1},
		{name: "annotations sets last-reloaded-from", o: Options{Strategy: Annotations},
			v: deploy(nil, false), reloads: []Reload{{Watched{Resource: cm, Hash: "h2", Auto: true}, Changed}},
			annotation: true, applied: 1},
		{name: "a deletion removes the variable", o: Options{Strategy: EnvVars},
			v:       deploy(nil, false, corev1.EnvVar{Name: "STAKATER_APP_CONFIG_CONFIGMAP", Value: "h1"}),
			reloads: []Reload{{Watched{Resource: cm, Auto: true}, Deleted}}, env: "app/-STAKATER_APP_CONFIG_CONFIGMAP", applied: 1},
		{name: "a deletion without a variable is skipped", o: Options{Strategy: EnvVars},
			v: deploy(nil, false), reloads: []Reload{{Watched{Resource: cm, Auto: true}, Deleted}}, skips: "configmap/app-config no_variable_to_remove"},
		{name: "no container to carry the marker", o: Options{Strategy: EnvVars},
			v: deploy(nil, false), reloads: []Reload{{Watched{Resource: other, Hash: "h", Auto: true}, Changed}}, noContainer: 1},
		{name: "a pause period pauses the Deployment", o: Options{Strategy: EnvVars},
			v:       deploy(map[string]string{names.PausePeriod: "5m"}, false),
			reloads: []Reload{{Watched{Resource: cm, Hash: "h2", Auto: true}, Changed}}, env: "app/STAKATER_APP_CONFIG_CONFIGMAP=h2",
			paused: true, meta: names.PausedAt, applied: 1},
		{name: "a person's pause is left alone", o: Options{Strategy: EnvVars},
			v:       deploy(map[string]string{names.PausePeriod: "5m"}, true),
			reloads: []Reload{{Watched{Resource: cm, Hash: "h2", Auto: true}, Changed}}, env: "app/STAKATER_APP_CONFIG_CONFIGMAP=h2", applied: 1},
		{name: "storm control stamps the reload", o: Options{Strategy: EnvVars, MinReloadInterval: time.Minute},
			v: deploy(nil, false), reloads: []Reload{{Watched{Resource: cm, Hash: "h2", Auto: true}, Changed}},
			env: "app/STAKATER_APP_CONFIG_CONFIGMAP=h2", meta: LastReload, applied: 1},
		{name: "Argo's restart strategy restarts the pods in place", o: Options{Strategy: EnvVars},
			v: rollout(map[string]string{names.RolloutStrategy: "restart"}), reloads: []Reload{{Watched{Resource: cm, Hash: "h2", Auto: true}, Changed}},
			restart: true, applied: 1},
		{name: "nothing to reload writes only the record", o: Options{Strategy: EnvVars, MinReloadInterval: time.Minute},
			v: deploy(map[string]string{names.PausePeriod: "5m"}, false)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Names = names
			c := &decider{o: tc.o, v: tc.v, now: now}
			d := c.buildChange(tc.reloads, nil, workload.Change{RecordKey: annotations.Applied, Record: `{"rec":"x"}`})
			ch := d.change
			if ch.RecordKey != annotations.Applied || ch.Record != `{"rec":"x"}` {
				t.Errorf("record %s=%s, want the planned one", ch.RecordKey, ch.Record)
			}
			var env []string
			for _, e := range ch.Env {
				if e.Remove {
					env = append(env, e.Container+"/-"+e.Name)
				} else {
					env = append(env, e.Container+"/"+e.Name+"="+e.Value)
				}
			}
			if got := strings.Join(env, ","); got != tc.env {
				t.Errorf("env %q, want %q", got, tc.env)
			}
			if _, ok := ch.TemplateAnnotations[names.LastReloadedFrom]; ok != tc.annotation {
				t.Errorf("template annotations %v, want last-reloaded-from %v", ch.TemplateAnnotations, tc.annotation)
			}
			if got := ch.Paused != nil && *ch.Paused; got != tc.paused {
				t.Errorf("paused %v, want %v", got, tc.paused)
			}
			if got := ch.RestartAt != nil; got != tc.restart || got && *ch.RestartAt != now.Format(time.RFC3339) {
				t.Errorf("restartAt %v, want set %v at %s", ch.RestartAt, tc.restart, now.Format(time.RFC3339))
			}
			var meta []string
			for k := range ch.MetaAnnotations {
				meta = append(meta, k)
			}
			if got := strings.Join(meta, ","); got != tc.meta {
				t.Errorf("metadata annotations %q, want %q", got, tc.meta)
			}
			var skips []string
			for _, s := range d.skips {
				skips = append(skips, s.Resource.String()+" "+s.Reason)
			}
			if len(d.applied) != tc.applied || strings.Join(skips, ",") != tc.skips || d.noContainer != tc.noContainer {
				t.Errorf("applied %d, skips %q, no container %d; want %d, %q, %d", len(d.applied), skips, d.noContainer, tc.applied, tc.skips, tc.noContainer)
			}
		})
	}
}

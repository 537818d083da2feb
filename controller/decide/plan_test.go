package decide

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/controller/refs"
)

// planChange is the whole reload decision: for each watched resource, its
// current hash against the one last applied, under the create and delete
// flags. These cases are the rules a sync and `reloader explain` share.
func TestPlanChange(t *testing.T) {
	cm := Resource{refs.ConfigMap, "app-config"}
	sec := Resource{refs.Secret, "creds"}
	spc := Resource{refs.SecretProviderClass, "vault"}
	applied := func(h string) Baseline { return Baseline{h, true, FromRecord} }
	cases := []struct {
		name           string
		set            map[Resource]Watched
		baselines      map[Resource]Baseline
		lists          map[string]string
		create, delete bool
		reloads        string // "res kind", sorted
		skips          string // "res reason", sorted
		next           string
	}{
		{name: "unchanged is nothing to do",
			set: map[Resource]Watched{cm: {Hash: "h1"}}, baselines: map[Resource]Baseline{cm: applied("h1")},
			next: `{"configmap/app-config":"h1"}`},
		{name: "a new hash is a change",
			set: map[Resource]Watched{cm: {Hash: "h2"}}, baselines: map[Resource]Baseline{cm: applied("h1")},
			reloads: "configmap/app-config changed", next: `{"configmap/app-config":"h2"}`},
		{name: "a marker counts as applied like the record",
			set: map[Resource]Watched{cm: {Hash: "h2"}}, baselines: map[Resource]Baseline{cm: {"h1", true, FromMarker}},
			reloads: "configmap/app-config changed", next: `{"configmap/app-config":"h2"}`},
		{name: "nothing known is the adopted baseline",
			set: map[Resource]Watched{cm: {Hash: "h2"}}, baselines: map[Resource]Baseline{cm: {}},
			skips: "configmap/app-config adopted_baseline", next: `{"configmap/app-config":"h2"}`},
		{name: "a missing resource never seen is no skip",
			set: map[Resource]Watched{cm: {}}, baselines: map[Resource]Baseline{cm: {}},
			next: `{"configmap/app-config":""}`},
		{name: "written after the workload's creation is a change",
			set: map[Resource]Watched{cm: {Hash: "h2"}}, baselines: map[Resource]Baseline{cm: {changedSinceCreation, true, FromFirstSight}},
			reloads: "configmap/app-config changed", next: `{"configmap/app-config":"h2"}`},
		{name: "created, flag off", set: map[Resource]Watched{cm: {Hash: "h1"}}, baselines: map[Resource]Baseline{cm: applied("")},
			skips: "configmap/app-config reload_on_create_disabled", next: `{"configmap/app-config":"h1"}`},
		{name: "created, flag on", create: true, set: map[Resource]Watched{cm: {Hash: "h1"}}, baselines: map[Resource]Baseline{cm: applied("")},
			reloads: "configmap/app-config created", next: `{"configmap/app-config":"h1"}`},
		{name: "created after first sight, flag on", create: true,
			set: map[Resource]Watched{cm: {Hash: "h1"}}, baselines: map[Resource]Baseline{cm: {"", true, FromFirstSight}},
			reloads: "configmap/app-config created", next: `{"configmap/app-config":"h1"}`},
		{name: "a SecretProviderClass appearing is the pod starting", create: true,
			set: map[Resource]Watched{spc: {Hash: "h1"}}, baselines: map[Resource]Baseline{spc: applied("")},
			next: `{"secretproviderclass/vault":"h1"}`},
		{name: "deleted, flag off", set: map[Resource]Watched{cm: {}}, baselines: map[Resource]Baseline{cm: applied("h1")},
			skips: "configmap/app-config reload_on_delete_disabled", next: `{"configmap/app-config":""}`},
		{name: "deleted, flag on", delete: true, set: map[Resource]Watched{cm: {}}, baselines: map[Resource]Baseline{cm: applied("h1")},
			reloads: "configmap/app-config deleted", next: `{"configmap/app-config":""}`},
		{name: "a named resource that is gone leaves the record to the wildcard entry", delete: true,
			set:       map[Resource]Watched{sec: {Named: true}},
			baselines: map[Resource]Baseline{sec: applied("h1")}, lists: map[string]string{"secret/*": "creds"},
			reloads: "secret/creds deleted", next: `{"secret/*":"creds"}`},
		{name: "several changes are sorted",
			set:       map[Resource]Watched{sec: {Hash: "s2"}, cm: {Hash: "c2"}},
			baselines: map[Resource]Baseline{sec: applied("s1"), cm: applied("c1")},
			reloads:   "configmap/app-config changed,secret/creds changed", next: `{"configmap/app-config":"c2","secret/creds":"s2"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := planChange(planInput{set: tc.set, baselines: tc.baselines, lists: tc.lists, reloadOnCreate: tc.create, reloadOnDelete: tc.delete})
			var rs, ss []string
			for _, r := range p.reloads {
				rs = append(rs, fmt.Sprintf("%s %s", r.Resource, [...]string{"changed", "created", "deleted"}[r.Change]))
			}
			for _, s := range p.skips {
				ss = append(ss, fmt.Sprintf("%s %s", s.Resource, s.Reason))
			}
			if got := strings.Join(rs, ","); got != tc.reloads {
				t.Errorf("reloads %q, want %q", got, tc.reloads)
			}
			if got := strings.Join(ss, ","); got != tc.skips {
				t.Errorf("skips %q, want %q", got, tc.skips)
			}
			if got := encodeRecord(p.next); got != tc.next {
				t.Errorf("record %s, want %s", got, tc.next)
			}
		})
	}
}

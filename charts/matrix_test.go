package charts

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint/support"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const defaultLockName = "stakater-reloader-lock"

// For every point of the values matrix and both charts: the RBAC is the
// table, row by row; the real apiserver accepts every manifest; and
// `helm lint --strict` passes with those values.
func TestChartMatrix(t *testing.T) {
	for _, chart := range []string{Reloader, ReloaderUBI} {
		for _, s := range matrix() {
			t.Run(chart+"/"+s.name, func(t *testing.T) {
				releaseNS := "reloader-system"
				if cp != nil {
					releaseNS = cp.Namespace(t)
					// Roles go into namespaces that must exist for the
					// apiserver to accept them.
					s.watchNamespaces = append([]string(nil), s.watchNamespaces...)
					for i := range s.watchNamespaces {
						s.watchNamespaces[i] = cp.Namespace(t)
					}
				}
				rel := Release{Name: "rel", Namespace: releaseNS, Values: s.values()}
				if cp != nil {
					rel.KubeVersion, _ = serverVersion(t)
				}
				objs := render(t, chart, rel)

				t.Run("RBAC rules equal the table", func(t *testing.T) {
					got, err := renderedGrants(objs, releaseNS, "rel-"+chart)
					if err != nil {
						t.Fatal(err)
					}
					missing, extra := diffGrants(expectedGrants(s, releaseNS, defaultLockName), got)
					for _, m := range missing {
						t.Errorf("missing grant: %s", m)
					}
					for _, e := range extra {
						t.Errorf("grant beyond the table: %s", e)
					}
					if s.namespaced && len(ofKind(objs, "ClusterRole"))+len(ofKind(objs, "ClusterRoleBinding")) > 0 {
						t.Errorf("watchGlobally=false rendered cluster-wide RBAC")
					}
					if s.rbacOff {
						for _, kind := range []string{"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"} {
							if n := len(ofKind(objs, kind)); n > 0 {
								t.Errorf("rbac.enabled=false rendered %d %s", n, kind)
							}
						}
					}
				})

				t.Run("the apiserver accepts every manifest", func(t *testing.T) {
					needControlPlane(t)
					dryRunAll(t, objs)
				})

				t.Run("helm lint --strict passes", func(t *testing.T) {
					lintStrict(t, chart, rel)
				})
			})
		}
	}
}

// dryRunAll has the apiserver admit each object without storing it.
func dryRunAll(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx := testContext(t)
	cl := monitoringCluster(t)
	for _, o := range objs {
		if err := cl.dryRunCreate(ctx, o); err != nil {
			t.Error(err)
		}
	}
}

// lintStrict runs the SDK's `helm lint --strict` on the chart as built from
// source (dependency build included), with the release's values.
func lintStrict(t *testing.T, chart string, rel Release) {
	t.Helper()
	dir := builtChart(t, chart)
	lint := action.NewLint()
	lint.Strict = true
	lint.Namespace = rel.Namespace
	if rel.KubeVersion != "" {
		kv, err := chartutil.ParseKubeVersion(rel.KubeVersion)
		if err != nil {
			t.Fatal(err)
		}
		lint.KubeVersion = kv
	}
	res := lint.Run([]string{dir}, rel.Values)
	for _, err := range res.Errors {
		t.Errorf("helm lint --strict %s: %v", chart, err)
	}
	for _, m := range res.Messages {
		if m.Severity >= support.WarningSev {
			t.Errorf("helm lint --strict %s: %s", chart, strings.TrimSpace(m.Error()))
		}
	}
}

// ignoreJobs stops Jobs being reloaded, not CronJobs: a CronJob reload creates
// a Job from the CronJob's template (rollout.reloadCronJob), and nothing else
// touches Jobs once they are ignored (no Job informer, no Job records). So
// with ignoreJobs alone every watched place allows exactly create on jobs;
// with CronJobs ignored too, nothing on jobs at all. Written out here rather
// than read from the table, for both charts, cluster-wide and namespaced.
func TestIgnoreJobsKeepsOnlyWhatCronJobReloadsNeed(t *testing.T) {
	all := []string{"create", "delete", "get", "list", "patch", "watch"}
	for _, chart := range []string{Reloader, ReloaderUBI} {
		for _, tc := range []struct {
			name                       string
			ignoreJobs, ignoreCronJobs bool
			want                       []string // verbs on batch/jobs in each watched place; nil: no rule
		}{
			{"nothing ignored", false, false, all},
			{"cronjobs ignored", false, true, all},
			{"jobs ignored, cronjobs reloaded", true, false, []string{"create"}},
			{"jobs and cronjobs ignored", true, true, nil},
		} {
			for _, namespaced := range []bool{false, true} {
				s := setup{ignoreJobs: tc.ignoreJobs, ignoreCronJobs: tc.ignoreCronJobs, namespaced: namespaced}
				places := []string{""}
				if namespaced {
					s.watchNamespaces = []string{"team-a"}
					places = []string{"reloader-system", "team-a"}
				}
				t.Run(fmt.Sprintf("%s/%s/namespaced=%v", chart, tc.name, namespaced), func(t *testing.T) {
					objs := render(t, chart, Release{Name: "rel", Namespace: "reloader-system", Values: s.values()})
					got, err := renderedGrants(objs, "reloader-system", "rel-"+chart)
					if err != nil {
						t.Fatal(err)
					}
					jobs := map[string][]string{}
					for _, g := range got {
						if g.group == "batch" && g.resource == "jobs" {
							if len(g.resourceNames) > 0 {
								t.Errorf("a jobs rule limited to names: %s", g)
							}
							jobs[g.namespace] = append(jobs[g.namespace], g.verbs...)
						}
					}
					want := map[string][]string{}
					if tc.want != nil {
						for _, ns := range places {
							want[ns] = tc.want
						}
					}
					for ns := range jobs {
						jobs[ns] = slices.Sorted(slices.Values(jobs[ns]))
					}
					if fmt.Sprint(jobs) != fmt.Sprint(want) {
						t.Errorf("batch/jobs verbs by namespace (\"\": cluster-wide): got %v, want %v", jobs, want)
					}
				})
			}
		}
	}
}

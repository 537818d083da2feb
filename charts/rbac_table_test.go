package charts

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// setup is one point of the values matrix, in the terms of issue 4's RBAC
// table. Its values() is what a user would put in a values file.
type setup struct {
	name              string
	namespaced        bool     // watchGlobally: false
	watchNamespaces   []string // reloader.namespaces (namespaced only)
	namespaceSelector string
	enableHA          bool
	replicas          int
	argo              bool
	openshift         bool
	csi               bool
	ignoreSecrets     bool
	ignoreConfigMaps  bool
	ignoreJobs        bool
	ignoreCronJobs    bool
	rbacOff           bool
	netpol            bool
	monitors          bool // ServiceMonitor, PodMonitor, Service and PodDisruptionBudget
	perKey            bool // reloadOnUsedKeysOnly: the fingerprint key Secret
}

func (s setup) ha() bool { return s.enableHA || s.replicas > 1 }

func (s setup) values() map[string]any {
	set := map[string]any{
		"reloader.watchGlobally":        !s.namespaced,
		"reloader.ignoreSecrets":        s.ignoreSecrets,
		"reloader.ignoreConfigMaps":     s.ignoreConfigMaps,
		"reloader.ignoreJobs":           s.ignoreJobs,
		"reloader.ignoreCronJobs":       s.ignoreCronJobs,
		"reloader.enableHA":             s.enableHA,
		"reloader.isArgoRollouts":       s.argo,
		"reloader.isOpenshift":          s.openshift,
		"reloader.enableCSIIntegration": s.csi,
		"reloader.rbac.enabled":         !s.rbacOff,
		"reloader.netpol.enabled":       s.netpol,
		"reloader.reloadOnUsedKeysOnly": s.perKey,
	}
	if len(s.watchNamespaces) > 0 {
		ns := make([]any, len(s.watchNamespaces))
		for i, n := range s.watchNamespaces {
			ns[i] = n
		}
		set["reloader.namespaces"] = ns
	}
	if s.namespaceSelector != "" {
		set["reloader.namespaceSelector"] = s.namespaceSelector
	}
	if s.replicas > 0 {
		set["reloader.deployment.replicas"] = s.replicas
	}
	if s.netpol {
		set["reloader.netpol.from"] = []any{map[string]any{"podSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "prometheus"}}}}
		set["reloader.netpol.to"] = []any{map[string]any{"ipBlock": map[string]any{"cidr": "192.0.2.0/24"}}}
	}
	if s.monitors {
		set["reloader.serviceMonitor.enabled"] = true
		set["reloader.serviceMonitor.interval"] = "30s"
		set["reloader.podMonitor.enabled"] = true
		set["reloader.podMonitor.interval"] = "30s"
		set["reloader.podDisruptionBudget.enabled"] = true
		set["reloader.service.port"] = 9090
	}
	return values(set)
}

// matrix is the set of values every chart test is run with.
func matrix() []setup {
	return []setup{
		{name: "global"},
		{name: "namespaced release namespace only", namespaced: true},
		{name: "namespaced list", namespaced: true, watchNamespaces: []string{"team-a", "team-b"}},
		{name: "namespace selector", namespaceSelector: "reloader=enabled"},
		{name: "HA", enableHA: true},
		{name: "HA by replicas", replicas: 2},
		{name: "Argo Rollouts", argo: true},
		{name: "OpenShift", openshift: true},
		{name: "CSI", csi: true},
		{name: "ignore secrets", ignoreSecrets: true},
		{name: "ignore configmaps jobs and cronjobs", ignoreConfigMaps: true, ignoreJobs: true, ignoreCronJobs: true},
		{name: "ignore jobs, cronjobs reloaded", ignoreJobs: true},
		{name: "ignore cronjobs, jobs reloaded", ignoreCronJobs: true},
		{name: "namespaced ignore jobs, cronjobs reloaded", namespaced: true, watchNamespaces: []string{"team-a"}, ignoreJobs: true},
		{name: "rbac off", rbacOff: true},
		{name: "netpol on", netpol: true},
		{name: "monitoring", monitors: true},
		{name: "per-key reloads", perKey: true},
		{name: "per-key reloads, secrets ignored", perKey: true, ignoreSecrets: true},
		{name: "namespaced everything", namespaced: true, watchNamespaces: []string{"team-a"}, enableHA: true, argo: true, openshift: true, csi: true, ignoreSecrets: true, netpol: true, monitors: true, perKey: true},
	}
}

// where a row of the table grants its rights.
type where int

const (
	// watched: cluster-wide when watching globally, else in each watched namespace.
	watched where = iota
	// clusterOnly: cluster-wide, only ever rendered when watching globally.
	clusterOnly
	// releaseNamespace: the namespace Reloader is installed in, always.
	releaseNamespace
)

// row is a row of the RBAC table of issue 4 (with the lead's `watch` on
// workloads), written here independently of the templates.
type row struct {
	when          string
	group         string
	resources     []string
	verbs         []string
	resourceNames []string
	where         where
	applies       func(setup) bool
}

func always(setup) bool { return true }

// metaInfoName is the controller's metadata ConfigMap, the only ConfigMap
// it writes; fingerprintKeyName the Secret of its fingerprint key, the only
// Secret it makes (fingerprint.DefaultSecretName).
const (
	metaInfoName       = "reloader-meta-info"
	fingerprintKeyName = "reloader-fingerprint-key"
)

func rbacTable(lockName string) []row {
	return []row{
		{"secrets unless ignored", "", []string{"secrets"}, []string{"get", "list", "watch"}, nil, watched, func(s setup) bool { return !s.ignoreSecrets }},
		{"configmaps unless ignored", "", []string{"configmaps"}, []string{"get", "list", "watch"}, nil, watched, func(s setup) bool { return !s.ignoreConfigMaps }},
		{"workloads always", "apps", []string{"deployments", "statefulsets", "daemonsets"}, []string{"get", "list", "watch", "patch"}, nil, watched, always},
		{"cronjobs unless ignored", "batch", []string{"cronjobs"}, []string{"get", "list", "watch", "patch"}, nil, watched, func(s setup) bool { return !s.ignoreCronJobs }},
		{"jobs unless ignored", "batch", []string{"jobs"}, []string{"create", "delete", "list", "get", "watch", "patch"}, nil, watched, func(s setup) bool { return !s.ignoreJobs }},
		// A CronJob reload creates a Job from the CronJob's template (rollout.reloadCronJob);
		// with Jobs ignored nothing else touches them: no Job informer, no Job records.
		{"jobs create only, for CronJob reloads, when jobs alone are ignored", "batch", []string{"jobs"}, []string{"create"}, nil, watched, func(s setup) bool { return s.ignoreJobs && !s.ignoreCronJobs }},
		{"events always", "", []string{"events"}, []string{"create", "patch"}, nil, watched, always},
		{"namespaces only with namespaceSelector", "", []string{"namespaces"}, []string{"get", "list", "watch"}, nil, clusterOnly, func(s setup) bool { return s.namespaceSelector != "" }},
		{"CSI objects only with CSI integration", "secrets-store.csi.x-k8s.io", []string{"secretproviderclasses", "secretproviderclasspodstatuses"}, []string{"get", "list", "watch"}, nil, watched, func(s setup) bool { return s.csi }},
		{"metadata configmap create in the release namespace always", "", []string{"configmaps"}, []string{"create"}, nil, releaseNamespace, always},
		{"metadata configmap get/update of reloader-meta-info always", "", []string{"configmaps"}, []string{"get", "update"}, []string{metaInfoName}, releaseNamespace, always},
		// create cannot be limited by name; get is limited to the key's Secret.
		{"secret create in the release namespace with per-key reloads", "", []string{"secrets"}, []string{"create"}, nil, releaseNamespace, func(s setup) bool { return s.perKey }},
		{"secret get of the fingerprint key with per-key reloads", "", []string{"secrets"}, []string{"get"}, []string{fingerprintKeyName}, releaseNamespace, func(s setup) bool { return s.perKey }},
		{"lease create in the release namespace in HA", "coordination.k8s.io", []string{"leases"}, []string{"create"}, nil, releaseNamespace, setup.ha},
		{"lease get/update of the lock in HA", "coordination.k8s.io", []string{"leases"}, []string{"get", "update"}, []string{lockName}, releaseNamespace, setup.ha},
		{"rollouts only with Argo Rollouts", "argoproj.io", []string{"rollouts"}, []string{"get", "list", "watch", "patch"}, nil, watched, func(s setup) bool { return s.argo }},
		{"deploymentconfigs only with OpenShift", "apps.openshift.io", []string{"deploymentconfigs"}, []string{"get", "list", "watch", "patch"}, nil, watched, func(s setup) bool { return s.openshift }},
	}
}

// grant is one resource's rights in one place: namespace "" is cluster-wide.
type grant struct {
	namespace     string
	group         string
	resource      string
	resourceNames []string
	verbs         []string
}

func (g grant) String() string {
	scope := "cluster-wide"
	if g.namespace != "" {
		scope = "namespace " + g.namespace
	}
	names := ""
	if len(g.resourceNames) > 0 {
		names = " named " + strings.Join(g.resourceNames, ",")
	}
	group := g.group
	if group == "" {
		group = "core"
	}
	return fmt.Sprintf("%s %s/%s%s: %s", scope, group, g.resource, names, strings.Join(g.verbs, ","))
}

// allows says whether g lets verb happen on group/resource (object name,
// empty for any object) in namespace (empty: cluster-wide).
func (g grant) allows(namespace, group, resource, name, verb string) bool {
	if g.group != group || g.resource != resource || !slices.Contains(g.verbs, verb) {
		return false
	}
	if g.namespace != "" && g.namespace != namespace {
		return false
	}
	if len(g.resourceNames) > 0 && !slices.Contains(g.resourceNames, name) {
		return false
	}
	return true
}

func normalise(g grant) grant {
	g.verbs = slices.Sorted(slices.Values(g.verbs))
	g.resourceNames = slices.Sorted(slices.Values(g.resourceNames))
	return g
}

// expectedGrants expands the table for s installed in releaseNS.
func expectedGrants(s setup, releaseNS, lockName string) []grant {
	if s.rbacOff {
		return nil
	}
	watchedNS := []string{""}
	if s.namespaced {
		// The release namespace is always watched, as in stakater's chart.
		watchedNS = []string{releaseNS}
		for _, ns := range s.watchNamespaces {
			if !slices.Contains(watchedNS, ns) {
				watchedNS = append(watchedNS, ns)
			}
		}
	}
	var out []grant
	for _, r := range rbacTable(lockName) {
		if !r.applies(s) {
			continue
		}
		places := watchedNS
		switch r.where {
		case clusterOnly:
			places = []string{""}
		case releaseNamespace:
			places = []string{releaseNS}
		}
		for _, ns := range places {
			for _, res := range r.resources {
				out = append(out, normalise(grant{ns, r.group, res, r.resourceNames, r.verbs}))
			}
		}
	}
	return out
}

// renderedGrants flattens the rendered Roles and ClusterRoles that are bound
// to the ServiceAccount; a role bound to anything else, or a binding to a role
// that was not rendered, is an error.
func renderedGrants(objs []*unstructured.Unstructured, saNamespace, saName string) ([]grant, error) {
	type key struct{ kind, namespace, name string }
	roles := map[key][]rbacv1.PolicyRule{}
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole", "Role":
			var r rbacv1.ClusterRole // Role has the same shape
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				return nil, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
			}
			roles[key{o.GetKind(), o.GetNamespace(), o.GetName()}] = r.Rules
		}
	}
	bound := map[key]bool{}
	var out []grant
	for _, o := range objs {
		if o.GetKind() != "ClusterRoleBinding" && o.GetKind() != "RoleBinding" {
			continue
		}
		var b rbacv1.RoleBinding
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
			return nil, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err)
		}
		want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: saName, Namespace: saNamespace}}
		if !slices.Equal(b.Subjects, want) {
			return nil, fmt.Errorf("%s %s/%s binds %v, want only ServiceAccount %s/%s", o.GetKind(), o.GetNamespace(), o.GetName(), b.Subjects, saNamespace, saName)
		}
		k := key{b.RoleRef.Kind, o.GetNamespace(), b.RoleRef.Name}
		if b.RoleRef.Kind == "ClusterRole" {
			k.namespace = ""
		}
		rules, ok := roles[k]
		if !ok {
			return nil, fmt.Errorf("%s %s/%s refers to %s %q, which the chart does not render", o.GetKind(), o.GetNamespace(), o.GetName(), b.RoleRef.Kind, b.RoleRef.Name)
		}
		bound[k] = true
		for _, rule := range rules {
			if len(rule.NonResourceURLs) > 0 {
				return nil, fmt.Errorf("%s %q grants non-resource URLs %v", k.kind, k.name, rule.NonResourceURLs)
			}
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					out = append(out, normalise(grant{o.GetNamespace(), g, res, rule.ResourceNames, rule.Verbs}))
				}
			}
		}
	}
	for k := range roles {
		if !bound[k] {
			return nil, fmt.Errorf("%s %s/%s is rendered but bound to nothing", k.kind, k.namespace, k.name)
		}
	}
	return out, nil
}

// diffGrants lists what is missing from got and what got has beyond want.
func diffGrants(want, got []grant) (missing, extra []string) {
	count := func(gs []grant) map[string]int {
		m := map[string]int{}
		for _, g := range gs {
			m[g.String()]++
		}
		return m
	}
	w, g := count(want), count(got)
	for k, n := range w {
		if g[k] < n {
			missing = append(missing, k)
		}
	}
	for k, n := range g {
		if w[k] < n {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return missing, extra
}

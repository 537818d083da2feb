package charts

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// probe is one question to the apiserver's authorizer.
type probe struct {
	namespace, group, resource, name, verb string
}

func (p probe) String() string {
	where := "cluster-wide"
	if p.namespace != "" {
		where = "in " + p.namespace
	}
	obj := p.resource
	if p.group != "" {
		obj = p.group + "/" + p.resource
	}
	if p.name != "" {
		obj += " named " + p.name
	}
	return fmt.Sprintf("%s %s %s", p.verb, obj, where)
}

var allVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// probeResources are every resource the table mentions plus some it must
// never grant.
var probeResources = []struct{ group, resource string }{
	{"", "secrets"}, {"", "configmaps"}, {"", "events"}, {"", "namespaces"}, {"", "pods"}, {"", "serviceaccounts"},
	{"apps", "deployments"}, {"apps", "statefulsets"}, {"apps", "daemonsets"}, {"apps", "replicasets"},
	{"batch", "cronjobs"}, {"batch", "jobs"},
	{"coordination.k8s.io", "leases"},
	{"secrets-store.csi.x-k8s.io", "secretproviderclasses"}, {"secrets-store.csi.x-k8s.io", "secretproviderclasspodstatuses"},
	{"argoproj.io", "rollouts"}, {"apps.openshift.io", "deploymentconfigs"},
	{"rbac.authorization.k8s.io", "roles"}, {"rbac.authorization.k8s.io", "clusterroles"},
}

var releaseCounter atomic.Int64

// applyAndProbe applies the chart's RBAC for s to the real apiserver, then asks
// SubjectAccessReviews for every verb on every probed resource in each of
// namespaces (and cluster-wide) and on the lease by name, comparing each
// answer with what the table grants. It returns the ServiceAccount's name.
func applyAndProbe(t *testing.T, s setup, releaseNS string, namespaces []string) (saName string) {
	t.Helper()
	ctx := testContext(t)
	version, _ := serverVersion(t)
	// ClusterRoles are cluster-wide: each test gets its own release name.
	rel := Release{Name: fmt.Sprintf("rbac%d", releaseCounter.Add(1)), Namespace: releaseNS, Values: s.values(), KubeVersion: version}
	sa, err := ApplyRBAC(ctx, cp.Admin, Reloader, rel)
	if err != nil {
		t.Fatal(err)
	}
	user := "system:serviceaccount:" + releaseNS + ":" + sa
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + releaseNS, "system:authenticated"}
	want := expectedGrants(s, releaseNS, defaultLockName)

	ask := func(p probe) bool {
		allowed, _, err := cp.Allowed(ctx, user, groups, authorizationv1.ResourceAttributes{
			Namespace: p.namespace, Verb: p.verb, Group: p.group, Resource: p.resource, Name: p.name,
		})
		if err != nil {
			t.Fatal(err)
		}
		return allowed
	}
	// The authorizer sees new bindings through an informer; wait for one.
	first := probe{namespace: releaseNS, resource: "configmaps", verb: "create"}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return ask(first), nil
	}); err != nil {
		t.Fatalf("%s never became allowed for %s after applying the chart's RBAC", first, user)
	}

	var probes []probe
	for _, ns := range append([]string{""}, namespaces...) {
		for _, r := range probeResources {
			for _, verb := range allVerbs {
				probes = append(probes, probe{ns, r.group, r.resource, "", verb})
			}
		}
		for _, name := range []string{defaultLockName, "another-lock"} {
			for _, verb := range allVerbs {
				probes = append(probes, probe{ns, "coordination.k8s.io", "leases", name, verb})
			}
		}
		for _, name := range []string{metaInfoName, "another-configmap"} {
			for _, verb := range allVerbs {
				probes = append(probes, probe{ns, "", "configmaps", name, verb})
			}
		}
		for _, name := range []string{fingerprintKeyName, "another-secret"} {
			for _, verb := range allVerbs {
				probes = append(probes, probe{ns, "", "secrets", name, verb})
			}
		}
	}
	for _, p := range probes {
		expected := false
		for _, g := range want {
			if g.allows(p.namespace, p.group, p.resource, p.name, p.verb) {
				expected = true
				break
			}
		}
		if got := ask(p); got != expected {
			if got {
				t.Errorf("%s may %s, which the table does not grant", user, p)
			} else {
				t.Errorf("%s may not %s, which the table grants", user, p)
			}
		}
	}
	return sa
}

// Installed globally with HA, the ServiceAccount may do exactly what the table
// grants: reads and workload patches everywhere, configmap writes only in
// the release namespace, lease reads and renewals only of the lock.
func TestGlobalServiceAccountIsAllowedExactlyTheTable(t *testing.T) {
	needControlPlane(t)
	releaseNS, other := cp.Namespace(t), cp.Namespace(t)
	sa := applyAndProbe(t, setup{enableHA: true}, releaseNS, []string{releaseNS, other})

	// The cases issue 4 names, spelled out (applyAndProbe covered them too).
	for _, p := range []probe{
		{namespace: other, resource: "configmaps", verb: "create"},
		{namespace: other, resource: "configmaps", verb: "update"},
		{namespace: releaseNS, group: "coordination.k8s.io", resource: "leases", name: "another-lock", verb: "update"},
		{namespace: other, group: "coordination.k8s.io", resource: "leases", name: defaultLockName, verb: "update"},
		{namespace: other, resource: "secrets", verb: "update"},
		// Workloads are patched, never updated; of ConfigMaps only the
		// controller's own metadata is written.
		{namespace: other, group: "apps", resource: "deployments", verb: "update"},
		{namespace: releaseNS, resource: "configmaps", name: "another-configmap", verb: "update"},
		{namespace: releaseNS, resource: "configmaps", verb: "update"},
	} {
		if allowedFor(t, releaseNS, sa, p) {
			t.Errorf("the chart's ServiceAccount may %s", p)
		}
	}
	if !allowedFor(t, releaseNS, sa, probe{namespace: releaseNS, group: "coordination.k8s.io", resource: "leases", name: defaultLockName, verb: "update"}) {
		t.Errorf("the chart's ServiceAccount may not renew its own lock %s", defaultLockName)
	}
}

func allowedFor(t *testing.T, saNamespace, sa string, p probe) bool {
	t.Helper()
	allowed, _, err := cp.Allowed(testContext(t), "system:serviceaccount:"+saNamespace+":"+sa,
		[]string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"},
		authorizationv1.ResourceAttributes{Namespace: p.namespace, Verb: p.verb, Group: p.group, Resource: p.resource, Name: p.name})
	if err != nil {
		t.Fatal(err)
	}
	return allowed
}

// Installed for a namespace list, the ServiceAccount reaches the listed
// namespaces and its own, and nothing else: secrets of an unlisted namespace
// are forbidden to the authorizer and to a real request with its token.
func TestNamespacedServiceAccountReachesOnlyListedNamespaces(t *testing.T) {
	needControlPlane(t)
	ctx := testContext(t)
	releaseNS, teamA, teamB, unlisted := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	s := setup{namespaced: true, watchNamespaces: []string{teamA, teamB}, enableHA: true, argo: true, csi: true}
	sa := applyAndProbe(t, s, releaseNS, []string{releaseNS, teamA, teamB, unlisted})

	for _, p := range []probe{
		{namespace: unlisted, resource: "secrets", verb: "list"},
		{namespace: unlisted, resource: "secrets", verb: "get"},
		{resource: "secrets", verb: "list"},
		{namespace: teamA, resource: "configmaps", verb: "create"},
		{namespace: releaseNS, group: "coordination.k8s.io", resource: "leases", name: "another-lock", verb: "get"},
	} {
		if allowedFor(t, releaseNS, sa, p) {
			t.Errorf("the chart's ServiceAccount may %s", p)
		}
	}

	cfg, err := cp.ServiceAccountConfig(ctx, releaseNS, sa)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	if _, err := cs.CoreV1().Secrets(teamA).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("listing secrets in listed namespace %s with the chart's ServiceAccount token: %v", teamA, err)
	}
	if _, err := cs.CoreV1().Secrets(unlisted).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing secrets in unlisted namespace %s with the chart's ServiceAccount token: got %v, want Forbidden", unlisted, err)
	}
	if _, err := cs.CoreV1().Secrets("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing secrets cluster-wide with the chart's ServiceAccount token: got %v, want Forbidden", err)
	}
}

// A namespaced install without a list gets Roles in its own namespace only.
func TestNamespacedServiceAccountWithoutListStaysInItsNamespace(t *testing.T) {
	needControlPlane(t)
	releaseNS, other := cp.Namespace(t), cp.Namespace(t)
	applyAndProbe(t, setup{namespaced: true}, releaseNS, []string{releaseNS, other})
}

// The namespace selector adds cluster-wide namespace reads, OpenShift adds
// DeploymentConfigs, ignoring secrets removes every secret right.
func TestGlobalServiceAccountFollowsOptionalRows(t *testing.T) {
	needControlPlane(t)
	releaseNS, other := cp.Namespace(t), cp.Namespace(t)
	applyAndProbe(t, setup{namespaceSelector: "team=x", openshift: true, ignoreSecrets: true, ignoreJobs: true}, releaseNS, []string{releaseNS, other})
}

// Per-key reloads add, in the release namespace only, create on Secrets
// (which RBAC cannot limit by name) and get of the fingerprint key's Secret;
// with Secrets otherwise ignored that is every right on Secrets.
func TestPerKeyServiceAccountMayMakeAndReadOnlyTheFingerprintKey(t *testing.T) {
	needControlPlane(t)
	releaseNS, other := cp.Namespace(t), cp.Namespace(t)
	sa := applyAndProbe(t, setup{perKey: true, ignoreSecrets: true}, releaseNS, []string{releaseNS, other})
	for _, ns := range []string{releaseNS, other, ""} {
		for _, name := range []string{fingerprintKeyName, "another-secret", ""} {
			for _, verb := range allVerbs {
				p := probe{namespace: ns, resource: "secrets", name: name, verb: verb}
				want := ns == releaseNS && (verb == "create" || verb == "get" && name == fingerprintKeyName)
				if got := allowedFor(t, releaseNS, sa, p); got != want {
					t.Errorf("per-key reloads, secrets ignored: may %s is %v, want %v", p, got, want)
				}
			}
		}
	}
}

// ignoreJobs with CronJobs still reloaded: the apiserver lets the
// ServiceAccount create Jobs (a CronJob reload does) and nothing else on them;
// with CronJobs ignored too, nothing on Jobs at all.
func TestIgnoreJobsServiceAccountMayOnlyCreateJobsForCronJobReloads(t *testing.T) {
	needControlPlane(t)
	releaseNS, teamA, other := cp.Namespace(t), cp.Namespace(t), cp.Namespace(t)
	sa := applyAndProbe(t, setup{namespaced: true, watchNamespaces: []string{teamA}, ignoreJobs: true}, releaseNS, []string{releaseNS, teamA, other})
	for _, ns := range []string{releaseNS, teamA, other, ""} {
		for _, verb := range allVerbs {
			p := probe{namespace: ns, group: "batch", resource: "jobs", verb: verb}
			want := verb == "create" && (ns == releaseNS || ns == teamA)
			if got := allowedFor(t, releaseNS, sa, p); got != want {
				t.Errorf("ignoreJobs, CronJobs reloaded: may %s is %v, want %v", p, got, want)
			}
		}
	}

	releaseNS, other = cp.Namespace(t), cp.Namespace(t)
	sa = applyAndProbe(t, setup{ignoreJobs: true, ignoreCronJobs: true}, releaseNS, []string{releaseNS, other})
	for _, ns := range []string{releaseNS, other, ""} {
		for _, verb := range allVerbs {
			p := probe{namespace: ns, group: "batch", resource: "jobs", verb: verb}
			if allowedFor(t, releaseNS, sa, p) {
				t.Errorf("ignoreJobs and ignoreCronJobs: the chart's ServiceAccount may %s", p)
			}
		}
	}
}

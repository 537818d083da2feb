package charts

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// image.digest pins the image as repository@digest, also when
// global.imageRegistry moves it to an internal registry; tags still work.
func TestImageReference(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chart string
		set   map[string]any
		want  string
	}{
		{"tag defaults to appVersion", Reloader, nil, "ghcr.io/reloader-dev/reloader:v0.1.0"},
		{"tag only", Reloader, map[string]any{"image.tag": "v1.2.3"}, "ghcr.io/reloader-dev/reloader:v1.2.3"},
		{"digest wins over tag", Reloader, map[string]any{"image.tag": "v1.2.3", "image.digest": testDigest}, "ghcr.io/reloader-dev/reloader@" + testDigest},
		{"digest with global registry", Reloader, map[string]any{"global.imageRegistry": "registry.corp:5000", "image.digest": testDigest}, "registry.corp:5000/reloader-dev/reloader@" + testDigest},
		{"tag with global registry", Reloader, map[string]any{"global.imageRegistry": "registry.corp", "image.tag": "v1.2.3"}, "registry.corp/reloader-dev/reloader:v1.2.3"},
		{"image.name inside global registry", Reloader, map[string]any{"global.imageRegistry": "registry.corp/", "image.name": "mirror/reloader", "image.digest": testDigest}, "registry.corp/mirror/reloader@" + testDigest},
		{"repository without host under global registry", Reloader, map[string]any{"global.imageRegistry": "registry.corp", "image.repository": "reloader-dev/reloader", "image.digest": testDigest}, "registry.corp/reloader-dev/reloader@" + testDigest},
		{"UBI variant by digest", ReloaderUBI, map[string]any{"image.digest": testDigest}, "ghcr.io/reloader-dev/reloader-ubi@" + testDigest},
		{"UBI variant with global registry", ReloaderUBI, map[string]any{"global.imageRegistry": "registry.corp", "image.digest": testDigest}, "registry.corp/reloader-dev/reloader-ubi@" + testDigest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := deployment(t, render(t, tc.chart, Release{Name: "rel", Namespace: "ops", Values: values(tc.set)}))
			if got := d.Spec.Template.Spec.Containers[0].Image; got != tc.want {
				t.Errorf("image = %q, want %q", got, tc.want)
			}
		})
	}
}

// Pull secrets are accepted as names or as {name} objects, on the pod and the
// ServiceAccount.
func TestImagePullSecretsAcceptBothSpellings(t *testing.T) {
	objs := render(t, Reloader, Release{Name: "rel", Namespace: "ops", Values: values(map[string]any{
		"global.imagePullSecrets": []any{"plain", map[string]any{"name": "object"}},
	})})
	want := []corev1.LocalObjectReference{{Name: "plain"}, {Name: "object"}}
	if got := deployment(t, objs).Spec.Template.Spec.ImagePullSecrets; !slices.Equal(got, want) {
		t.Errorf("pod imagePullSecrets = %v, want %v", got, want)
	}
	var sa corev1.ServiceAccount
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(ofKind(objs, "ServiceAccount")[0].Object, &sa); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sa.ImagePullSecrets, want) {
		t.Errorf("ServiceAccount imagePullSecrets = %v, want %v", sa.ImagePullSecrets, want)
	}
}

// values.schema.json makes `helm install` fail on a wrong type or a malformed
// digest, with the offending key in the message.
func TestSchemaRejectsBadValuesNamingTheKey(t *testing.T) {
	for _, tc := range []struct {
		set     map[string]any
		wantKey string
	}{
		{map[string]any{"image.digest": "sha256:abc"}, "/image/digest"},
		{map[string]any{"image.digest": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}, "/image/digest"},
		{map[string]any{"image.pullPolicy": "Sometimes"}, "/image/pullPolicy"},
		{map[string]any{"reloader.watchGlobally": "yes"}, "/reloader/watchGlobally"},
		{map[string]any{"reloader.namespaces": "Team_A"}, "/reloader/namespaces"},
		{map[string]any{"reloader.deployment.replicaCount": 2}, "/reloader/deployment"},
		{map[string]any{"reloader.custom_annotations.configMap": "x"}, "/reloader/custom_annotations"},
		{map[string]any{"reloader.podDisruptionBudget.minavailable": 1}, "/reloader/podDisruptionBudget"},
		{map[string]any{"imageTag": "v1"}, "imageTag"},
		{map[string]any{"reloader.deployment.replicas": "two"}, "/reloader/deployment/replicas"},
		{map[string]any{"reloader.reloadStrategy": "restart"}, "/reloader/reloadStrategy"},
		{map[string]any{"reloader.netpol.apiServer.ports": []any{"https"}}, "/reloader/netpol/apiServer/ports"},
		{map[string]any{"global.imagePullSecrets": "regcred"}, "/global/imagePullSecrets"},
		{map[string]any{"reloader.deployment.strategy.type": "BlueGreen"}, "/reloader/deployment/strategy/type"},
		{map[string]any{"reloader.deployment.strategy.maxSurge": 1}, "/reloader/deployment/strategy"},
		{map[string]any{"reloader.deployment.strategy.rollingUpdate.maxSurge": "one"}, "/reloader/deployment/strategy/rollingUpdate/maxSurge"},
		// The apiserver refuses rollingUpdate with Recreate; the schema says so at install.
		{map[string]any{"reloader.deployment.strategy": map[string]any{"type": "Recreate", "rollingUpdate": map[string]any{"maxSurge": 1}}}, "/reloader/deployment/strategy/rollingUpdate"},
	} {
		for _, chart := range []string{Reloader, ReloaderUBI} {
			c, err := Load(chart)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Render(c, Release{Name: "rel", Namespace: "ops", Values: values(tc.set)})
			if err == nil {
				t.Errorf("%s: values %v were accepted", chart, tc.set)
				continue
			}
			if !strings.Contains(err.Error(), tc.wantKey) {
				t.Errorf("%s: values %v: error does not name %s:\n%v", chart, tc.set, tc.wantKey, err)
			}
		}
	}
}

// Values the controller cannot honour together fail the install, naming them.
func TestContradictoryValuesFailNamingTheKeys(t *testing.T) {
	for _, tc := range []struct {
		set  map[string]any
		want string
	}{
		{map[string]any{"reloader.ignoreSecrets": true, "reloader.ignoreConfigMaps": true}, "reloader.ignoreSecrets and reloader.ignoreConfigMaps"},
		{map[string]any{"reloader.namespaces": []any{"a"}}, "reloader.namespaces is set while reloader.watchGlobally is true"},
		{map[string]any{"reloader.watchGlobally": false, "reloader.namespaceSelector": "a=b"}, "reloader.namespaceSelector needs reloader.watchGlobally=true"},
		{map[string]any{"reloader.deployment.env.secret": map[string]any{"ALERT_WEBHOOK_URL": "x"}}, "reloader.deployment.env.secret is not supported"},
	} {
		c, err := Load(Reloader)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Render(c, Release{Name: "rel", Namespace: "ops", Values: values(tc.set)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %v: got error %v, want one saying %q", tc.set, err, tc.want)
		}
	}
}

// The container's arguments and environment use the original's flag names.
func TestArgumentsFollowValues(t *testing.T) {
	for _, tc := range []struct {
		name    string
		set     map[string]any
		want    []string
		notWant []string
		envWant []string
		envNot  []string
	}{
		{name: "defaults", want: []string{"--log-level=info"},
			notWant: []string{"--enable-ha=true", "--reload-strategy=default", "--metrics-addr=:9090"}, envWant: []string{"GOMAXPROCS", "GOMEMLIMIT", "POD_NAME", "POD_NAMESPACE", "RELOADER_NAMESPACE", "RELOADER_DEPLOYMENT_NAME"}, envNot: []string{"KUBERNETES_NAMESPACE", "METRICS_COUNT_BY_NAMESPACE"}},
		{name: "everything on", set: map[string]any{
			"reloader.autoReloadAll": true, "reloader.reloadStrategy": "annotations", "reloader.reloadOnCreate": true,
			"reloader.reloadOnDelete": true, "reloader.syncAfterRestart": true, "reloader.ignoreSecrets": true,
			"reloader.ignoreJobs": true, "reloader.ignoreCronJobs": true, "reloader.ignoreNamespaces": "kube-system",
			"reloader.namespaceSelector": "team=x", "reloader.resourceLabelSelector": "reload=yes", "reloader.logFormat": "json",
			"reloader.logLevel": "debug", "reloader.isArgoRollouts": true, "reloader.isOpenshift": true,
			"reloader.enableCSIIntegration": true, "reloader.enablePProf": true, "reloader.webhookUrlSecret.name": "hooks", "reloader.deployment.env.open": map[string]any{"EXTRA": "1"},
		}, want: []string{"--auto-reload-all=true", "--reload-strategy=annotations", "--reload-on-create=true", "--reload-on-delete=true",
			"--sync-after-restart=true", "--resources-to-ignore=secrets", "--ignored-workload-types=jobs,cronjobs",
			"--namespaces-to-ignore=kube-system", "--namespace-selector=team=x", "--resource-label-selector=reload=yes",
			"--log-format=json", "--log-level=debug", "--is-Argo-Rollouts=true",
			"--enable-csi-integration=true", "--enable-pprof=true", "--pprof-addr=127.0.0.1:6060"},
			// isOpenshift renders no flag, as in stakater's chart: the controller detects the API.
			// The webhook URL is a credential: from a Secret, never in args.
			notWant: []string{"--is-openshift=true"}, envWant: []string{"EXTRA", "RELOADER_WEBHOOK_URL"}},
		{name: "ignore configmaps", set: map[string]any{"reloader.ignoreConfigMaps": true}, want: []string{"--resources-to-ignore=configmaps"}},
		{name: "namespaced to the release namespace", set: map[string]any{"reloader.watchGlobally": false},
			notWant: []string{"--namespaces=ops"}, envWant: []string{"KUBERNETES_NAMESPACE"}},
		{name: "namespaced to a list, the release namespace included", set: map[string]any{"reloader.watchGlobally": false, "reloader.namespaces": []any{"b", "a", "b"}},
			want: []string{"--namespaces=a,b,ops"}, envNot: []string{"KUBERNETES_NAMESPACE"}},
		{name: "namespaced to a comma separated string", set: map[string]any{"reloader.watchGlobally": false, "reloader.namespaces": "b, a"},
			want: []string{"--namespaces=a,b,ops"}},
		{name: "HA asked for", set: map[string]any{"reloader.enableHA": true}, want: []string{"--enable-ha=true"}, notWant: []string{"--ha-lock-name=stakater-reloader-lock"}},
		{name: "per-key reloads", set: map[string]any{"reloader.reloadOnUsedKeysOnly": true}, want: []string{"--reload-on-used-keys-only=true"}},
		{name: "approval required by default", set: map[string]any{"reloader.reloadApproval": "required"}, want: []string{"--reload-approval=required"}},
		{name: "metrics by namespace", set: map[string]any{"reloader.enableMetricsByNamespace": true}, envWant: []string{"METRICS_COUNT_BY_NAMESPACE"}},
		{name: "HA by replicas with own lock", set: map[string]any{"reloader.deployment.replicas": 2, "reloader.haLockName": "my-lock"}, want: []string{"--enable-ha=true", "--ha-lock-name=my-lock"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := deployment(t, render(t, Reloader, Release{Name: "rel", Namespace: "ops", Values: values(tc.set)})).Spec.Template.Spec.Containers[0]
			for _, a := range tc.want {
				if !slices.Contains(c.Args, a) {
					t.Errorf("args %v lack %s", c.Args, a)
				}
			}
			for _, a := range tc.notWant {
				if slices.Contains(c.Args, a) {
					t.Errorf("args %v have %s", c.Args, a)
				}
			}
			var env []string
			for _, e := range c.Env {
				env = append(env, e.Name)
			}
			for _, e := range tc.envWant {
				if !slices.Contains(env, e) {
					t.Errorf("env %v lacks %s", env, e)
				}
			}
			for _, e := range tc.envNot {
				if slices.Contains(env, e) {
					t.Errorf("env %v has %s", env, e)
				}
			}
		})
	}
}

// More than one replica means leader election and replicas spread over
// nodes; an explicit affinity is kept as given.
func TestHAReplicasGetLeaderElectionAndAntiAffinity(t *testing.T) {
	spec := deployment(t, render(t, Reloader, Release{Name: "rel", Namespace: "ops", Values: values(map[string]any{"reloader.deployment.replicas": 2})})).Spec
	if spec.Replicas == nil || *spec.Replicas != 2 {
		t.Errorf("replicas = %v, want 2", spec.Replicas)
	}
	aa := spec.Template.Spec.Affinity
	if aa == nil || aa.PodAntiAffinity == nil || len(aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 ||
		aa.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm.TopologyKey != "kubernetes.io/hostname" {
		t.Errorf("HA pod affinity = %+v, want anti-affinity by kubernetes.io/hostname", aa)
	}
	single := deployment(t, render(t, Reloader, Release{Name: "rel", Namespace: "ops"})).Spec.Template.Spec
	if single.Affinity != nil {
		t.Errorf("single replica has affinity %+v, want none", single.Affinity)
	}
	own := map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
		"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "infra", "operator": "Exists"}}}}}}}
	kept := deployment(t, render(t, Reloader, Release{Name: "rel", Namespace: "ops", Values: values(map[string]any{"reloader.deployment.replicas": 2, "reloader.deployment.affinity": own})})).Spec.Template.Spec
	if kept.Affinity == nil || kept.Affinity.NodeAffinity == nil || kept.Affinity.PodAntiAffinity != nil {
		t.Errorf("explicit affinity became %+v, want it as given", kept.Affinity)
	}
}

// The NetworkPolicy denies by default and allows: scrapes of the metrics port
// from netpol.from (from anywhere when empty, as stakater's chart does, so
// monitoring keeps working); the API server on 443 and 6443 and netpol.toPorts,
// towards netpol.to (stakater's meaning of `to`: the peers of its 443 rule);
// DNS on 53 UDP and TCP.
func TestNetworkPolicyAllowsExactlyWhatReloaderUses(t *testing.T) {
	from := []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"name": "monitoring"}}}}
	to := []any{map[string]any{"ipBlock": map[string]any{"cidr": "198.51.100.0/24"}}}
	policy := func(set map[string]any) networkingv1.NetworkPolicy {
		t.Helper()
		nps := ofKind(render(t, Reloader, Release{Name: "rel", Namespace: "ops", Values: values(set)}), "NetworkPolicy")
		if len(nps) != 1 {
			t.Fatalf("rendered %d NetworkPolicies, want 1", len(nps))
		}
		var np networkingv1.NetworkPolicy
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(nps[0].Object, &np); err != nil {
			t.Fatal(err)
		}
		return np
	}
	egress := func(np networkingv1.NetworkPolicy) []string {
		var out []string
		for _, r := range np.Spec.Egress {
			peers := "anywhere"
			if len(r.To) > 0 && r.To[0].IPBlock != nil {
				peers = r.To[0].IPBlock.CIDR
			}
			out = append(out, peers+" "+portsOf(r.Ports))
		}
		return out
	}

	np := policy(map[string]any{"reloader.netpol.enabled": true, "reloader.netpol.from": from, "reloader.netpol.to": to})
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) {
		t.Errorf("policyTypes = %v, want Ingress and Egress", np.Spec.PolicyTypes)
	}
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 1 || np.Spec.Ingress[0].From[0].NamespaceSelector == nil ||
		portsOf(np.Spec.Ingress[0].Ports) != "TCP/http" {
		t.Errorf("ingress = %+v, want TCP/http from netpol.from only", np.Spec.Ingress)
	}
	if got, want := egress(np), []string{"198.51.100.0/24 TCP/443,TCP/6443", "anywhere UDP/53,TCP/53", "198.51.100.0/24 TCP/443"}; !slices.Equal(got, want) {
		t.Errorf("egress = %q, want %q", got, want)
	}

	np = policy(map[string]any{"reloader.netpol.enabled": true})
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 0 || portsOf(np.Spec.Ingress[0].Ports) != "TCP/http" {
		t.Errorf("without from: ingress %+v, want TCP/http from any peer so scraping keeps working", np.Spec.Ingress)
	}
	if got, want := egress(np), []string{"anywhere TCP/443,TCP/6443", "anywhere UDP/53,TCP/53", "anywhere TCP/443"}; !slices.Equal(got, want) {
		t.Errorf("without to: egress = %q, want %q", got, want)
	}

	apiOnly := []any{map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.1/32"}}}
	np = policy(map[string]any{"reloader.netpol.enabled": true, "reloader.netpol.to": to, "reloader.netpol.apiServer.to": apiOnly})
	if got, want := egress(np), []string{"10.0.0.1/32 TCP/443,TCP/6443", "anywhere UDP/53,TCP/53", "198.51.100.0/24 TCP/443"}; !slices.Equal(got, want) {
		t.Errorf("with apiServer.to: egress = %q, want %q", got, want)
	}
}

// Enabling the PodDisruptionBudget without a number never blocks a node
// drain; numbers given are kept, maxUnavailable winning as in stakater's chart.
func TestPodDisruptionBudgetDefaultNeverBlocksDrains(t *testing.T) {
	for _, tc := range []struct {
		set  map[string]any
		want string
	}{
		{map[string]any{}, "maxUnavailable=1"},
		{map[string]any{"reloader.podDisruptionBudget.minAvailable": 1}, "minAvailable=1"},
		{map[string]any{"reloader.podDisruptionBudget.minAvailable": 1, "reloader.podDisruptionBudget.maxUnavailable": "50%"}, "maxUnavailable=50%"},
	} {
		tc.set["reloader.podDisruptionBudget.enabled"] = true
		pdbs := ofKind(render(t, Reloader, Release{Name: "rel", Namespace: "ops", Values: values(tc.set)}), "PodDisruptionBudget")
		if len(pdbs) != 1 {
			t.Fatalf("%v: rendered %d PodDisruptionBudgets, want 1", tc.set, len(pdbs))
		}
		var pdb policyv1.PodDisruptionBudget
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(pdbs[0].Object, &pdb); err != nil {
			t.Fatal(err)
		}
		var got []string
		if v := pdb.Spec.MinAvailable; v != nil {
			got = append(got, "minAvailable="+v.String())
		}
		if v := pdb.Spec.MaxUnavailable; v != nil {
			got = append(got, "maxUnavailable="+v.String())
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%v: budget %v, want %s", tc.set, got, tc.want)
		}
	}
	if n := len(ofKind(render(t, Reloader, Release{Name: "rel", Namespace: "ops"}), "PodDisruptionBudget")); n != 0 {
		t.Errorf("defaults render %d PodDisruptionBudgets, want none", n)
	}
}

func portsOf(ps []networkingv1.NetworkPolicyPort) string {
	var out []string
	for _, p := range ps {
		proto := "TCP"
		if p.Protocol != nil {
			proto = string(*p.Protocol)
		}
		port := "any"
		if p.Port != nil {
			port = p.Port.String()
		}
		out = append(out, proto+"/"+port)
	}
	return strings.Join(out, ",")
}

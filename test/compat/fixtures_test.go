package compat

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/charts"
	"github.com/reloader-dev/reloader/test/controlplane"
)

// releaseNS stands for the release namespace in expected flags.
const releaseNS = "$RELEASE_NS"

// stakaterFlags are the container arguments stakater's chart 2.2.16 renders
// for each fixture, worked out by hand from its deployment.yaml and written
// as it writes them (some flags as two arguments, --namespace-selector with
// literal quotes, --enable-pprof without a value). Every flag of this chart
// must mean the same: normalised, the two lists are equal.
var stakaterFlags = map[string][]string{
	"stakater-defaults.yaml": {"--log-level=info"},
	"namespaced.yaml":        {"--log-format=json", "--log-level=info", "--namespaces=" + releaseNS + ",compat-team-a,compat-team-b"},
	"custom-annotations.yaml": {"--log-level=info",
		"--configmap-annotation", "config.example.com/reload-configmaps",
		"--secret-annotation", "config.example.com/reload-secrets",
		"--auto-annotation", "config.example.com/auto",
		"--secret-auto-annotation", "config.example.com/auto-secrets",
		"--configmap-auto-annotation", "config.example.com/auto-configmaps",
		"--auto-search-annotation", "config.example.com/search",
		"--search-match-annotation", "config.example.com/match",
		"--ignore-annotation", "config.example.com/ignore",
		"--pause-deployment-annotation", "config.example.com/pause-period",
		"--pause-deployment-time-annotation", "config.example.com/paused-at",
		"--webhook-url", "https://hooks.example.com/reloader"},
	"ha.yaml":          {"--log-level=info", "--enable-ha=true"},
	"monitoring.yaml":  {"--log-format=json", "--log-level=warning"},
	"netpol.yaml":      {"--log-level=info"},
	"pdb.yaml":         {"--log-level=info", "--enable-ha=true"},
	"volumes.yaml":     {"--log-level=info"},
	"env-secrets.yaml": {"--log-level=info"},
	"image.yaml":       {"--log-level=info"},
	"options.yaml": {"--log-level=debug", "--resources-to-ignore=secrets", "--ignored-workload-types=jobs,cronjobs",
		"--namespaces-to-ignore=kube-system,kube-public", `--namespace-selector="reloader=enabled"`,
		"--resource-label-selector=reload=true", "--enable-pprof", "--pprof-addr=:6061", "--enable-csi-integration=true",
		"--is-Argo-Rollouts=true", "--reload-on-create=true", "--reload-on-delete=true", "--sync-after-restart=true",
		"--reload-strategy=annotations", "--auto-reload-all=true"},
}

// checks are what else each fixture promises beyond the flags.
var checks = map[string]func(t *testing.T, objs []*unstructured.Unstructured, d *appsv1.Deployment){
	"stakater-defaults.yaml": func(t *testing.T, _ []*unstructured.Unstructured, d *appsv1.Deployment) {
		if d.Spec.Template.Labels["provider"] != "stakater" {
			t.Errorf("deployment.labels not on the pods: %v", d.Spec.Template.Labels)
		}
		wantEnv(t, d, "GOMAXPROCS", "GOMEMLIMIT", "RELOADER_NAMESPACE", "RELOADER_DEPLOYMENT_NAME")
	},
	"ha.yaml": func(t *testing.T, _ []*unstructured.Unstructured, d *appsv1.Deployment) {
		if *d.Spec.Replicas != 2 || d.Spec.Template.Spec.PriorityClassName != "system-cluster-critical" {
			t.Errorf("replicas %d, priorityClassName %q", *d.Spec.Replicas, d.Spec.Template.Spec.PriorityClassName)
		}
		for _, e := range d.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "GOMEMLIMIT" && e.Value != "200MiB" {
				t.Errorf("GOMEMLIMIT = %+v, want the override 200MiB", e)
			}
		}
	},
	"monitoring.yaml": func(t *testing.T, objs []*unstructured.Unstructured, d *appsv1.Deployment) {
		for _, kind := range []string{"Service", "ServiceMonitor", "PodMonitor"} {
			if len(ofKind(objs, kind)) != 1 {
				t.Errorf("no %s rendered", kind)
			}
		}
		wantEnv(t, d, "METRICS_COUNT_BY_NAMESPACE")
	},
	"netpol.yaml": wantKinds("NetworkPolicy"),
	"pdb.yaml":    wantKinds("PodDisruptionBudget"),
	"volumes.yaml": func(t *testing.T, _ []*unstructured.Unstructured, d *appsv1.Deployment) {
		var mounts []string
		for _, m := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
			mounts = append(mounts, m.MountPath)
		}
		if !slices.Contains(mounts, "/etc/ssl/certs/corp") || !slices.Contains(mounts, "/tmp") {
			t.Errorf("volume mounts %v, want the CA bundle and /tmp", mounts)
		}
	},
	"env-secrets.yaml": func(t *testing.T, _ []*unstructured.Unstructured, d *appsv1.Deployment) {
		wantEnv(t, d, "ALERT_ON_RELOAD", "ALERT_SINK", "ALERT_WEBHOOK_URL", "ALERT_ADDITIONAL_INFO", "NODE_NAME")
		for _, e := range d.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "EMPTY_IS_SKIPPED" {
				t.Error("an empty env.open value was rendered; stakater's chart skips it")
			}
			if e.Name == "ALERT_WEBHOOK_URL" && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "reloader-alerts") {
				t.Errorf("ALERT_WEBHOOK_URL = %+v, want it from Secret reloader-alerts", e)
			}
		}
	},
	"image.yaml": func(t *testing.T, _ []*unstructured.Unstructured, d *appsv1.Deployment) {
		c := d.Spec.Template.Spec.Containers[0]
		if c.Image != "registry.corp.example:5000/mirror/reloader:v1.2.3" || c.ImagePullPolicy != "Always" {
			t.Errorf("image %s (%s), want stakater's registry.corp.example:5000/mirror/reloader:v1.2.3 (Always)", c.Image, c.ImagePullPolicy)
		}
	},
	"options.yaml": func(t *testing.T, _ []*unstructured.Unstructured, d *appsv1.Deployment) {
		if d.Spec.Selector.MatchLabels["cost-center"] != "platform" || d.Labels["owner"] != "compat-owners" {
			t.Errorf("selector %v, labels %v: want matchLabels in the selector and templated deployment.labels", d.Spec.Selector.MatchLabels, d.Labels)
		}
	},
}

// Every fixture renders, the apiserver admits every object, and the
// controller gets the flags stakater's chart would give it.
func TestFixturesRenderInstallAndKeepStakatersFlags(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 9 {
		t.Fatalf("%d fixtures, want stakater's defaults and at least 8 more", len(files))
	}
	ns := "compat-fixtures"
	var kubeVersion string
	if cp != nil {
		ctx := testContext(t)
		ns = cp.Namespace(t)
		cs := cp.AdminClient(t)
		for _, extra := range []string{"compat-team-a", "compat-team-b"} {
			if err := controlplane.EnsureNamespace(ctx, cs, extra); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
		installCRDs(t, ctx, monitoringCRDs...)
		info, err := cs.Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		kubeVersion = info.GitVersion
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			want, ok := stakaterFlags[name]
			if !ok {
				t.Fatalf("no expected flags stated for testdata/%s", name)
			}
			objs := render(t, charts.Release{Name: "compat", Namespace: ns, Values: fixture(t, name), KubeVersion: kubeVersion})
			d := deploymentOf(t, objs)
			got := normalise(d.Spec.Template.Spec.Containers[0].Args)
			exp := normalise(strings.Split(strings.ReplaceAll(strings.Join(want, "\x00"), releaseNS, ns), "\x00"))
			// stakater's chart passes the webhook URL, a credential, in the
			// args; ours hands the same value to the controller from a Secret
			// the chart writes (env RELOADER_WEBHOOK_URL), so it is absent
			// from the args and must be in the environment instead.
			exp = slices.DeleteFunc(exp, func(f string) bool {
				if url, ok := strings.CutPrefix(f, "--webhook-url="); ok {
					requireWebhookURLFromSecret(t, objs, d, url)
					return true
				}
				return false
			})
			for i, f := range exp {
				if list, ok := strings.CutPrefix(f, "--namespaces="); ok {
					// stakater's chart sorts the list (sortAlpha).
					items := strings.Split(list, ",")
					sort.Strings(items)
					exp[i] = "--namespaces=" + strings.Join(items, ",")
				}
			}
			if !slices.Equal(got, exp) {
				t.Errorf("flags differ from stakater's chart\n got: %q\nwant: %q", got, exp)
			}
			if check := checks[name]; check != nil {
				check(t, objs, d)
			}
			if cp == nil {
				return
			}
			if err := charts.DryRun(testContext(t), cp.Admin, objs); err != nil {
				t.Errorf("the apiserver refuses what testdata/%s renders:\n%v", name, err)
			}
		})
	}
}

// Values files written for stakater's chart that this chart cannot honour
// fail the install with the key and what to use instead.
func TestRefusedKeysNameTheKeyAndTheWayOut(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want []string
	}{
		{"reloader:\n  deployment:\n    env:\n      secret:\n        ALERT_WEBHOOK_URL: https://hooks.example.com/x\n",
			[]string{"reloader.deployment.env.secret", "reloader.deployment.env.existing"}},
		{"reloader:\n  watchGlobally: false\n  ignoreNamespaces: kube-system\n", []string{"reloader.ignoreNamespaces", "reloader.namespaces"}},
		{"reloader:\n  namespaces: [a]\n", []string{"reloader.namespaces", "reloader.watchGlobally=false"}},
		{"reloader:\n  deployment:\n    image:\n      name: stakater/reloader\n", []string{"/reloader/deployment", "image"}},
		{"reloader:\n  podMonitor:\n    enable: true\n", []string{"/reloader/podMonitor", "enable"}},
	} {
		c, err := charts.Load(charts.Reloader)
		if err != nil {
			t.Fatal(err)
		}
		vals := map[string]any{}
		if err := yaml.Unmarshal([]byte(tc.yaml), &vals); err != nil {
			t.Fatal(err)
		}
		_, err = charts.Render(c, charts.Release{Name: "compat", Namespace: "ops", Values: vals})
		if err == nil {
			t.Errorf("values %q were accepted", tc.yaml)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("values %q: error does not say %q:\n%v", tc.yaml, w, err)
			}
		}
	}
}

// normalise writes every flag as --name=value: stakater's chart passes some
// as two arguments, flags without a value mean true, and quotes around a
// value are shell-style decoration its controller strips.
func normalise(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.Contains(a, "=") {
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				a += "=" + args[i+1]
				i++
			} else {
				a += "=true"
			}
		}
		name, value, _ := strings.Cut(a, "=")
		out = append(out, name+"="+strings.Trim(value, `"`))
	}
	sort.Strings(out)
	return out
}

func wantEnv(t *testing.T, d *appsv1.Deployment, names ...string) {
	t.Helper()
	var have []string
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		have = append(have, e.Name)
	}
	for _, n := range names {
		if !slices.Contains(have, n) {
			t.Errorf("env %v lacks %s", have, n)
		}
	}
}

func wantKinds(kinds ...string) func(*testing.T, []*unstructured.Unstructured, *appsv1.Deployment) {
	return func(t *testing.T, objs []*unstructured.Unstructured, _ *appsv1.Deployment) {
		for _, k := range kinds {
			if len(ofKind(objs, k)) != 1 {
				t.Errorf("no %s rendered", k)
			}
		}
	}
}

// requireWebhookURLFromSecret checks that the controller reads url from a
// Secret the chart renders, through env RELOADER_WEBHOOK_URL.
func requireWebhookURLFromSecret(t *testing.T, objs []*unstructured.Unstructured, d *appsv1.Deployment, url string) {
	t.Helper()
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name != "RELOADER_WEBHOOK_URL" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			continue
		}
		for _, o := range objs {
			if o.GetKind() != "Secret" || o.GetName() != e.ValueFrom.SecretKeyRef.Name {
				continue
			}
			if got, _, _ := unstructured.NestedString(o.Object, "stringData", e.ValueFrom.SecretKeyRef.Key); got == url {
				return
			}
		}
	}
	t.Errorf("the webhook URL of stakater's --webhook-url does not reach the controller from a rendered Secret")
}

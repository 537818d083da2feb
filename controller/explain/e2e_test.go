package explain_test

import (
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/explain"
	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/test/controlplane"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

const (
	auto       = "reloader.stakater.com/auto"
	search     = "reloader.stakater.com/search"
	match      = "reloader.stakater.com/match"
	ignore     = "reloader.stakater.com/ignore"
	secretAuto = "secret.reloader.stakater.com/auto"
	cmReload   = "configmap.reloader.stakater.com/reload"
	cmExclude  = "configmaps.exclude.reloader.stakater.com/reload"
)

// Each cause users report as "my workload did not reload" gets its own
// explanation line, verdict and exit code, with a running controller whose
// options explain reads from its reloader-meta-info.
func TestExplainNamesEachCause(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns, other := cp.Namespace(t), cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns,
		configMap("app-config", nil, nil),
		configMap("ignored-cm", ann(ignore, "true"), nil),
		configMap("labelled-cm", nil, map[string]string{"reload": "yes"}),
		configMap("tagged-cm", ann(auto, "true"), nil),
		secret("db"),
		deployment("up-to-date", ann(auto, "true"), nil, envFromCM("app-config")),
		deployment("on-template", nil, ann(auto, "true"), envFromCM("app-config")),
		deployment("shadowed", ann(cmReload, "other-.*"), ann(auto, "true"), envFromCM("app-config")),
		deployment("not-opted-in", nil, nil, envFromCM("app-config")),
		deployment("search-no-match", ann(search, "true"), nil, envFromCM("app-config")),
		deployment("ignored", ann(auto, "true"), nil, envFromCM("ignored-cm")),
		deployment("excluded", ann(auto, "true", cmExclude, "app-config"), nil, envFromCM("app-config")),
		deployment("typed-auto", ann(secretAuto, "true"), nil, envFromCM("app-config"), envFromSecret("db")),
		deployment("sub-path", ann(auto, "true"), nil, subPathCM("app-config", "app.yaml")),
		deployment("missing", ann(auto, "true"), nil, envFromCM("nope")),
		deployment("annotated-resource", nil, nil, envFromCM("tagged-cm")),
		deployment("unlabelled", ann(auto, "true"), nil, envFromCM("app-config")),
	)
	reloadertest.MustCreate(t, cs, other, configMap("app-config", nil, nil), deployment("elsewhere", ann(auto, "true"), nil, envFromCM("app-config")))
	c := startController(t, ns)
	for _, d := range []string{"up-to-date", "on-template", "shadowed", "search-no-match", "ignored", "excluded", "typed-auto", "sub-path", "missing", "unlabelled"} {
		waitRecorded(t, cs, ns, d)
	}
	fromController := []string{"--controller-namespace=" + ns, "--readyz-url=" + c.readyz}

	cases := []struct {
		name     string
		ns       string
		args     []string // besides KIND/NAME, -n and fromController
		verdict  string
		code     int
		line     string // a line of the text output
		resource string // "Kind/name" whose reason is checked
		reason   string
	}{
		{name: "up-to-date", verdict: explain.UpToDate, code: 0,
			line: `ConfigMap app-config: watched: reloader.stakater.com/auto="true" on the metadata`, resource: "ConfigMap/app-config", reason: explain.ReasonAuto},
		{name: "on-template", verdict: explain.UpToDate, code: 0,
			line: `reloader.stakater.com/auto="true" on the pod template`, resource: "ConfigMap/app-config", reason: explain.ReasonAuto},
		{name: "shadowed", verdict: explain.NotWatched, code: 0,
			line:     `annotation reloader.stakater.com/auto="true" on the pod template is not read for ConfigMaps: the metadata carries reload annotations for them`,
			resource: "ConfigMap/app-config", reason: explain.ReasonNotNamed},
		{name: "not-opted-in", verdict: explain.NotWatched, code: 0,
			line: `not opted in; to opt in: kubectl annotate deployment/not-opted-in reloader.stakater.com/auto=true`, resource: "ConfigMap/app-config", reason: explain.ReasonNotOptedIn},
		{name: "search-no-match", verdict: explain.NotWatched, code: 0,
			line:     `ConfigMap app-config: not watched: reloader.stakater.com/search="true" on the metadata, but the ConfigMap lacks reloader.stakater.com/match="true"`,
			resource: "ConfigMap/app-config", reason: explain.ReasonSearchWithoutMatch},
		{name: "ignored", verdict: explain.NotWatched, code: 0,
			line: `ConfigMap ignored-cm: not watched: the ConfigMap carries reloader.stakater.com/ignore="true"`, resource: "ConfigMap/ignored-cm", reason: explain.ReasonIgnoreAnnotation},
		{name: "excluded", verdict: explain.NotWatched, code: 0,
			line: `ConfigMap app-config: not watched: excluded by configmaps.exclude.reloader.stakater.com/reload="app-config" on the metadata`, resource: "ConfigMap/app-config", reason: explain.ReasonExcluded},
		{name: "typed-auto", verdict: explain.UpToDate, code: 0,
			line:     `ConfigMap app-config: not watched: secret.reloader.stakater.com/auto="true" on the metadata covers only Secrets; add configmap.reloader.stakater.com/auto="true" for ConfigMaps`,
			resource: "ConfigMap/app-config", reason: explain.ReasonTypedAutoOtherKind},
		{name: "sub-path", verdict: explain.UpToDate, code: 0,
			line:     `ConfigMap app-config is mounted with subPath "app.yaml" in container app at /etc/app/app.yaml: the kubelet never refreshes subPath mounts; only a reload (new pods) delivers a change`,
			resource: "ConfigMap/app-config", reason: explain.ReasonAuto},
		{name: "missing", verdict: explain.UpToDate, code: 0,
			line: `uses ConfigMap "nope", which does not exist`, resource: "ConfigMap/nope", reason: explain.ReasonMissing},
		{name: "annotated-resource", verdict: explain.NotWatched, code: 0,
			line: `ConfigMap tagged-cm carries reloader.stakater.com/auto, which has effect only on a workload`, resource: "ConfigMap/tagged-cm", reason: explain.ReasonNotOptedIn},
		{name: "elsewhere", ns: other, verdict: explain.NotWatched, code: 0,
			line: "out of scope: namespace " + other + " is outside the controller's namespaces (" + ns + ")"},
		// The options of a controller that is not running (or not yet
		// installed): from the flags given to explain.
		{name: "up-to-date", args: []string{"--options-from=flags", "--namespace-selector=team=payments"}, verdict: explain.NotWatched, code: 0,
			line: "out of scope: namespace " + ns + ` does not match --namespace-selector "team=payments"`},
		{name: "unlabelled", args: []string{"--options-from=flags", "--resource-label-selector=reload=yes"}, verdict: explain.NotWatched, code: 0,
			line:     "ConfigMap app-config: it exists but does not match --resource-label-selector=reload=yes: the controller does not see it",
			resource: "ConfigMap/app-config", reason: explain.ReasonLabelSelector},
		{name: "up-to-date", args: []string{"--options-from=flags", "--resources-to-ignore=configMaps"}, verdict: explain.NotWatched, code: 0,
			line: "ConfigMap app-config: the controller does not watch ConfigMaps (--resources-to-ignore=configMaps)", resource: "ConfigMap/app-config", reason: explain.ReasonKindIgnored},
	}
	for _, tc := range cases {
		wns := ns
		if tc.ns != "" {
			wns = tc.ns
		}
		args := append([]string{"explain", "deployment/" + tc.name, "-n", wns}, tc.args...)
		if !strings.Contains(strings.Join(tc.args, " "), "--options-from=flags") {
			args = append(args, fromController...)
		}
		t.Run(tc.name+strings.Join(tc.args, ""), func(t *testing.T) {
			text := runExplain(t, reloaderBin, cp.AdminKubeconfig, args...)
			if text.code != tc.code {
				t.Errorf("exit code %d, want %d\n%s%s", text.code, tc.code, text.stdout, text.stderr)
			}
			if !strings.Contains(text.stdout, tc.line) {
				t.Errorf("output lacks %q:\n%s%s", tc.line, text.stdout, text.stderr)
			}
			rep := reportOf(t, runExplain(t, reloaderBin, cp.AdminKubeconfig, append(args, "--output=json")...))
			if strings.Contains(tc.line, "does not match --namespace-selector") && rep.Skip != "namespace_not_selected" {
				t.Errorf("skip %q, want the controller's namespace_not_selected", rep.Skip)
			}
			if rep.Verdict != tc.verdict {
				t.Errorf("verdict %q, want %q (%s)", rep.Verdict, tc.verdict, rep.Summary)
			}
			if tc.resource != "" {
				kind, name, _ := strings.Cut(tc.resource, "/")
				if got := resourceOf(t, rep, kind, name); got.Reason != tc.reason {
					t.Errorf("%s: reason %q (%s), want %q", tc.resource, got.Reason, got.Detail, tc.reason)
				}
			}
		})
	}

	// The problem explain shows is, word for word, what the controller
	// reports in its ReloadFail Event.
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		l, err := cs.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=missing,reason=ReloadFail"})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range l.Items {
			if strings.Contains(e.Message, `uses ConfigMap "nope", which does not exist`) {
				return true, ""
			}
		}
		return false, "no ReloadFail Event with the text explain prints"
	})
}

// The controller is stopped, a ConfigMap changes: explain says a reload is
// due and blocked (exit 4). The controller comes back and reloads; explain
// then agrees the workload is up to date, shows the reload and the pause
// that follows it.
func TestExplainAgreesWithTheControllerThatReloads(t *testing.T) {
	requireControlPlane(t)
	ctx := context.Background()
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, configMap("app-config", nil, nil),
		deployment("web", ann(auto, "true", "deployment.reloader.stakater.com/pause-period", "1h"), nil, envFromCM("app-config")))
	c := startController(t, ns)
	waitRecorded(t, cs, ns, "web")
	args := []string{"explain", "deploy/web", "-n", ns, "--controller-namespace=" + ns, "--readyz-url=" + c.readyz}
	if r := runExplain(t, reloaderBin, cp.AdminKubeconfig, args...); r.code != explain.ExitOK || !strings.Contains(r.stdout, "up to date: every watched resource is applied") {
		t.Fatalf("before any change: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := c.Stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "app-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	oldHash := hash.SHA1.ConfigMap(cm.Data, nil)
	cm.Data["k"] = "2"
	if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	newHash := hash.SHA1.ConfigMap(cm.Data, nil)

	r := runExplain(t, reloaderBin, cp.AdminKubeconfig, args...)
	if r.code != explain.ExitPending || !strings.Contains(r.stdout, "but blocked: no controller is running") ||
		!strings.Contains(r.stdout, "reload due (changed): hash "+newHash[:12]+", applied "+oldHash[:12]) {
		t.Fatalf("controller stopped, ConfigMap changed: exit %d, want %d\n%s%s", r.code, explain.ExitPending, r.stdout, r.stderr)
	}
	t.Logf("blocked:\n%s", r.stdout)
	rep := reportOf(t, runExplain(t, reloaderBin, cp.AdminKubeconfig, append(args, "-o", "json")...))
	res := resourceOf(t, rep, "ConfigMap", "app-config")
	if rep.Verdict != explain.Blocked || !res.Due || res.Change != "changed" || res.Hash != newHash || res.Applied != oldHash || rep.Controller.Running != "no" {
		t.Fatalf("report: verdict %s running %s resource %+v", rep.Verdict, rep.Controller.Running, res)
	}

	c = startController(t, ns)
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range d.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "STAKATER_APP_CONFIG_CONFIGMAP" && e.Value == newHash {
				return true, ""
			}
		}
		return false, "not reloaded yet"
	})
	args = []string{"explain", "deploy/web", "-n", ns, "--controller-namespace=" + ns, "--readyz-url=" + c.readyz}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		r = runExplain(t, reloaderBin, cp.AdminKubeconfig, args...)
		return r.code == explain.ExitOK && strings.Contains(r.stdout, "strategy env-vars (STAKATER_APP_CONFIG_CONFIGMAP on container app)"),
			"after the reload: " + r.stdout + r.stderr
	})
	if !strings.Contains(r.stdout, "up to date: hash "+newHash[:12]+" applied") || !strings.Contains(r.stdout, "Changes detected in 'app-config' of type 'CONFIGMAP'") ||
		!strings.Contains(r.stdout, "the Deployment is paused by the pause period until") {
		t.Fatalf("after the reload, explain must show it:\n%s", r.stdout)
	}
}

// No controller installed: no reloader-meta-info where explain looks, so it
// says none runs and a due reload is blocked.
func TestExplainSaysWhenNoControllerIsInstalled(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, configMap("app-config", nil, nil), deployment("web", ann(auto, "true"), nil, envFromCM("app-config")))
	r := runExplain(t, reloaderBin, cp.AdminKubeconfig, "explain", "deployment/web", "-n", ns, "--controller-namespace="+ns)
	for _, want := range []string{
		"running: no; options from flags given to explain (no reloader-meta-info in namespace " + ns + ")",
		"no reloader-meta-info ConfigMap found: no controller appears to be installed",
		"nothing pending, but the controller has not recorded this workload yet",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}
	if r.code != explain.ExitOK {
		t.Errorf("exit %d, want %d", r.code, explain.ExitOK)
	}
}

// explain runs with the user's identity and only reads: under a Role with
// get and list only it explains fully; without the right to read Secrets it
// still explains the rest and names what it could not read.
func TestExplainNeedsOnlyReadAccessAndSaysWhatItCouldNotRead(t *testing.T) {
	requireControlPlane(t)
	ctx := context.Background()
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, configMap("app-config", nil, nil), secret("db"),
		deployment("web", ann(auto, "true"), nil, envFromCM("app-config"), envFromSecret("db")))
	c := startController(t, ns)
	waitRecorded(t, cs, ns, "web")
	read := []string{"get", "list"}
	full := []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "events"}, Verbs: read},
	}
	noSecrets := []rbacv1.PolicyRule{full[0], {APIGroups: []string{""}, Resources: []string{"configmaps", "events"}, Verbs: read}}
	for _, u := range []struct {
		user  string
		rules []rbacv1.PolicyRule
	}{{"reader-" + ns, full}, {"no-secrets-" + ns, noSecrets}} {
		if err := cp.Grant(ctx, u.user, ns, controlplane.User(u.user), u.rules); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := func(user string) string {
		cfg, err := cp.UserConfig(user)
		if err != nil {
			t.Fatal(err)
		}
		return writeKubeconfig(t, cfg)
	}
	args := []string{"explain", "deployment/web", "-n", ns, "--controller-namespace=" + ns, "--readyz-url=" + c.readyz, "-o", "json"}

	rep := reportOf(t, runExplain(t, reloaderBin, kubeconfig("reader-"+ns), args...))
	if rep.Verdict != explain.UpToDate || len(rep.Unreadable) != 0 {
		t.Fatalf("get/list only: verdict %s, unreadable %v", rep.Verdict, rep.Unreadable)
	}
	for _, name := range []string{"app-config", "db"} {
		kind := map[string]string{"app-config": "ConfigMap", "db": "Secret"}[name]
		if r := resourceOf(t, rep, kind, name); !r.Watched || r.Applied == "" || r.Applied != r.Hash {
			t.Errorf("get/list only: %s %+v, want watched and applied", name, r)
		}
	}

	r := runExplain(t, reloaderBin, kubeconfig("no-secrets-"+ns), args...)
	rep = reportOf(t, r)
	if db := resourceOf(t, rep, "Secret", "db"); db.Reason != explain.ReasonUnreadable || !strings.Contains(db.Detail, "forbidden") {
		t.Errorf("Secret db without read access: %+v", db)
	}
	if cm := resourceOf(t, rep, "ConfigMap", "app-config"); !cm.Watched || cm.Applied != cm.Hash {
		t.Errorf("ConfigMap app-config must still be explained: %+v", cm)
	}
	if !strings.Contains(strings.Join(rep.Unreadable, "\n"), "listing Secrets in "+ns+": forbidden") {
		t.Errorf("unreadable = %v, want the Secrets list named", rep.Unreadable)
	}
	if r.code != explain.ExitOK {
		t.Errorf("exit %d, want %d", r.code, explain.ExitOK)
	}
}

// Installed as kubectl-reloader, the binary is the kubectl plugin: explain
// works the same, and without a subcommand it prints help instead of
// starting a controller with the user's credentials.
func TestKubectlPlugin(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, configMap("app-config", nil, nil), deployment("web", nil, nil, envFromCM("app-config")))
	r := runExplain(t, pluginBin, cp.AdminKubeconfig, "explain", "deploy/web", "-n", ns, "--controller-namespace="+ns)
	if r.code != explain.ExitOK || !strings.Contains(r.stdout, "not opted in") {
		t.Fatalf("kubectl reloader explain: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runExplain(t, pluginBin, "")
	if r.code != 0 || !strings.Contains(r.stdout, "kubectl reloader [command]") || strings.Contains(r.stderr, "starting reloader") {
		t.Fatalf("kubectl reloader without a subcommand: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for args, want := range map[string]int{"explain": explain.ExitUsage, "explain pod/x": explain.ExitUsage, "explain deploy/absent -n " + ns: explain.ExitError} {
		if r := runExplain(t, pluginBin, cp.AdminKubeconfig, strings.Fields(args)...); r.code != want {
			t.Errorf("kubectl reloader %s: exit %d, want %d\n%s", args, r.code, want, r.stderr)
		}
	}
}

// With --enable-ha, explain reads the Lease and names the replica that
// leads; /readyz says whether the one it reaches leads or stands by.
func TestExplainNamesTheLeader(t *testing.T) {
	requireControlPlane(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, configMap("app-config", nil, nil), deployment("web", ann(auto, "true"), nil, envFromCM("app-config")))
	c := startControllerEnv(t, ns, []string{"POD_NAME=replica-a", "POD_NAMESPACE=" + ns}, "--enable-ha")
	waitRecorded(t, cs, ns, "web")
	var rep explain.Report
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		rep = reportOf(t, runExplain(t, reloaderBin, cp.AdminKubeconfig, "explain", "deploy/web", "-n", ns,
			"--controller-namespace="+ns, "--readyz-url="+c.readyz, "-o", "json"))
		return rep.Controller.Leader == "replica-a", strings.Join(rep.Controller.Details, "; ")
	})
	if rep.Controller.Running != "yes" || rep.Verdict != explain.UpToDate ||
		!strings.Contains(strings.Join(rep.Controller.Details, "\n"), `answered "ok leader"`) {
		t.Fatalf("controller %+v, verdict %s", rep.Controller, rep.Verdict)
	}
}

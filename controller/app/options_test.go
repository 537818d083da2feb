package app

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func resolve(t *testing.T, env map[string]string, args ...string) (*Resolved, error) {
	t.Helper()
	o := DefaultOptions()
	fs := pflag.NewFlagSet("reloader", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o.Resolve(func(k string) string { return env[k] })
}

func TestDefaultsAreTheOriginals(t *testing.T) {
	r, err := resolve(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Controller
	if c.Strategy != "env-vars" || c.ReloadOnCreate || c.ReloadOnDelete || c.AutoReloadAll || len(c.Namespaces) != 0 {
		t.Fatalf("defaults differ from stakater/Reloader's: %+v", c)
	}
	if c.Names.Auto != "reloader.stakater.com/auto" || c.Names.ConfigMapReload != "configmap.reloader.stakater.com/reload" {
		t.Fatalf("annotation names: %+v", c.Names)
	}
	if c.Budget.Enabled() || c.Budget.Deadline != 10*time.Minute {
		t.Fatalf("rollout budget %+v, want off, with a 10m --rollout-deadline", c.Budget)
	}
}

func TestInvalidValuesFailAtStartNamingTheFlag(t *testing.T) {
	cases := map[string][]string{
		"--reload-strategy":                    {"--reload-strategy=rolling"},
		"--reload-on-create":                   {"--reload-on-create=sometimes"},
		"--resources-to-ignore":                {"--resources-to-ignore=pods"},
		"only configMaps or secrets, not both": {"--resources-to-ignore=configMaps,secrets"},
		"--ignored-workload-types":             {"--ignored-workload-types=deployments"},
		"--namespace-selector":                 {"--namespace-selector=a b c"},
		"--log-format":                         {"--log-format=xml"},
		"--log-level":                          {"--log-level=loud"},
		"--min-reload-interval":                {"--min-reload-interval=-1s"},
		"--auto-annotation":                    {"--auto-annotation="},
		"POD_NAME":                             {"--enable-ha"},
		"--is-Argo-Rollouts":                   {"--is-Argo-Rollouts=maybe"},
		"--adoption-qps":                       {"--adoption-qps=-1"},
		"--rollout-deadline":                   {"--rollout-deadline=0s"},
	}
	for want, args := range cases {
		t.Run(want, func(t *testing.T) {
			_, err := resolve(t, nil, args...)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("%v: got %v, want an error naming %s", args, err, want)
			}
		})
	}
}

func TestSelectorsAcceptTheOriginalsSyntax(t *testing.T) {
	r, err := resolve(t, nil, "--resource-label-selector=team:payments,reload=*", "--namespace-selector=env=prod")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Controller.ResourceSelector; got != "reload,team=payments" && got != "team=payments,reload" {
		t.Fatalf("resource selector = %q", got)
	}
	if got := r.Controller.NamespaceSelector.String(); got != "env=prod" {
		t.Fatalf("namespace selector = %q", got)
	}
	// The quoted form stakater's chart renders.
	r, err = resolve(t, nil, `--namespace-selector="env=prod"`)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Controller.NamespaceSelector.String(); got != "env=prod" {
		t.Fatalf("quoted namespace selector = %q", got)
	}
}

func TestKubernetesNamespaceSelectsSingleNamespaceMode(t *testing.T) {
	r, err := resolve(t, map[string]string{"KUBERNETES_NAMESPACE": "team-a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Controller.Namespaces) != 1 || r.Controller.Namespaces[0] != "team-a" {
		t.Fatalf("namespaces = %v", r.Controller.Namespaces)
	}
	r, err = resolve(t, map[string]string{"KUBERNETES_NAMESPACE": "team-a"}, "--namespaces=x,y")
	if err != nil || len(r.Controller.Namespaces) != 2 {
		t.Fatalf("--namespaces must win over KUBERNETES_NAMESPACE: %v %v", r, err)
	}
}

func TestMetaInfoRedactsTheWebhookURL(t *testing.T) {
	o := DefaultOptions()
	o.WebhookURL = "https://hooks.example/services/T000/SECRET"
	eff := o.effective(&Resolved{})
	if eff.WebhookURL != "<redacted>" {
		t.Fatalf("webhookUrl published as %q", eff.WebhookURL)
	}
}

// Resolve is where the environment is read: the original's variables reach
// the controller through it, and a bad one fails at start naming it.
func TestResolveReadsTheEnvironment(t *testing.T) {
	r, err := resolve(t, map[string]string{
		"METRICS_COUNT_BY_NAMESPACE": "enabled", "GOGC": "100", "KUBECONFIG": "/k/config",
		"ALERT_ON_RELOAD": "true", "ALERT_SINK": "slack", "ALERT_WEBHOOK_URL": "https://hooks.example.com/x",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !r.CountByNamespace || !r.GOGCSet || r.KubeconfigEnv != "/k/config" || !r.AlertsOn || r.Alerts.URL != "https://hooks.example.com/x" {
		t.Errorf("resolved %+v: want every variable read", r)
	}
	r, err = resolve(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.CountByNamespace || r.GOGCSet || r.KubeconfigEnv != "" || r.AlertsOn {
		t.Errorf("resolved %+v from an empty environment: want the defaults", r)
	}
	if _, err := resolve(t, map[string]string{"ALERT_ON_RELOAD": "yes"}); err == nil || !strings.Contains(err.Error(), "ALERT_ON_RELOAD") {
		t.Errorf("ALERT_ON_RELOAD=yes: got %v, want an error naming the variable", err)
	}
}

package charts

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The webhook URL is a credential: the chart takes it from an existing
// Secret (env RELOADER_WEBHOOK_URL from a secretKeyRef), never into the
// container's args; a URL in values, for the webhook or for alerts, fails
// the install saying where it belongs. pprof is served on loopback only.
// stakater's reloader.webhookUrl value still installs: the chart writes it
// into a Secret of its own, never into the Deployment.
func TestTheWebhookURLComesFromASecretNeverFromArgs(t *testing.T) {
	rel := Release{Name: "rel", Namespace: "ops", Values: values(map[string]any{
		"reloader.webhookUrlSecret.name": "hooks", "reloader.webhookUrlSecret.key": "reload-url", "reloader.enablePProf": true})}
	c := deployment(t, render(t, Reloader, rel)).Spec.Template.Spec.Containers[0]
	for _, a := range c.Args {
		if strings.Contains(a, "webhook") {
			t.Errorf("args carry %s", a)
		}
	}
	found := false
	for _, e := range c.Env {
		if e.Name != "RELOADER_WEBHOOK_URL" {
			continue
		}
		found = true
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
			e.ValueFrom.SecretKeyRef.Name != "hooks" || e.ValueFrom.SecretKeyRef.Key != "reload-url" {
			t.Errorf("RELOADER_WEBHOOK_URL is %+v, want it from Secret hooks, key reload-url", e)
		}
	}
	if !found {
		t.Errorf("env %v lacks RELOADER_WEBHOOK_URL", c.Env)
	}
	if !strings.Contains(strings.Join(c.Args, " "), "--pprof-addr=127.0.0.1:6060") {
		t.Errorf("pprof is not on loopback by default: %v", c.Args)
	}

	for _, tc := range []struct {
		set  map[string]any
		want string
	}{
		{map[string]any{"reloader.webhookUrl": "https://hooks.example/T0KEN", "reloader.webhookUrlSecret.name": "hooks"}, "reloader.webhookUrl and reloader.webhookUrlSecret are both set"},
		{map[string]any{"reloader.deployment.env.open": map[string]any{"ALERT_WEBHOOK_URL": "https://hooks.example/T0KEN"}}, "reloader.deployment.env.open.ALERT_WEBHOOK_URL is not supported"},
		{map[string]any{"reloader.deployment.env.open": map[string]any{"RELOADER_WEBHOOK_URL": "https://hooks.example/T0KEN"}}, "reloader.webhookUrlSecret"},
	} {
		for _, chart := range []string{Reloader, ReloaderUBI} {
			c, err := Load(chart)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Render(c, Release{Name: "rel", Namespace: "ops", Values: values(tc.set)})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "T0KEN") {
				t.Errorf("%s with %v: error %v, want one saying %q and not repeating the URL", chart, tc.set, err, tc.want)
			}
		}
	}
}

// A values file written for stakater's chart, with reloader.webhookUrl, installs
// unchanged, and the URL reaches the container only through a Secret.
func TestStakatersWebhookURLValueIsKeptInASecretTheChartWrites(t *testing.T) {
	const url = "https://hooks.example/T0KEN"
	for _, chart := range []string{Reloader, ReloaderUBI} {
		objs := render(t, chart, Release{Name: "rel", Namespace: "ops", Values: values(map[string]any{"reloader.webhookUrl": url})})
		var secret string
		for _, o := range objs {
			if o.GetKind() == "Secret" {
				secret = o.GetName()
				if got, _, _ := unstructured.NestedString(o.Object, "stringData", "url"); got != url {
					t.Errorf("%s: Secret %s holds url %q, want the value", chart, secret, got)
				}
				continue
			}
			if raw, err := o.MarshalJSON(); err != nil || strings.Contains(string(raw), "T0KEN") {
				t.Errorf("%s: %s %s carries the URL (%v)", chart, o.GetKind(), o.GetName(), err)
			}
		}
		if secret == "" {
			t.Fatalf("%s: no Secret holds reloader.webhookUrl", chart)
		}
		c := deployment(t, objs).Spec.Template.Spec.Containers[0]
		found := false
		for _, e := range c.Env {
			if e.Name == "RELOADER_WEBHOOK_URL" {
				found = e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == secret && e.ValueFrom.SecretKeyRef.Key == "url"
			}
		}
		if !found {
			t.Errorf("%s: RELOADER_WEBHOOK_URL does not come from Secret %s: %+v", chart, secret, c.Env)
		}
	}
}

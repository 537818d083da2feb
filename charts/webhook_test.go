package charts

import (
	"strings"
	"testing"
)

// The webhook URL is a credential: the chart takes it from an existing
// Secret (env RELOADER_WEBHOOK_URL from a secretKeyRef), never into the
// container's args; a URL in values, for the webhook or for alerts, fails
// the install saying where it belongs. pprof is served on loopback only.
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
		{map[string]any{"reloader.webhookUrl": "https://hooks.example/T0KEN"}, "reloader.webhookUrl is not supported: the URL is a credential"},
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

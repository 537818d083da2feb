package app

import (
	"strings"
	"testing"
)

// The webhook URL is read from RELOADER_WEBHOOK_URL (the chart fills it from
// a Secret); --webhook-url still works; both at once is refused, and no
// error repeats the URL. pprof, when enabled, listens on loopback unless
// told otherwise.
func TestTheWebhookURLComesFromTheEnvironmentAndPProfFromLoopback(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	const url = "https://hooks.example/services/T0KEN"

	o := DefaultOptions()
	r, err := o.Resolve(env(map[string]string{WebhookURLEnv: url}))
	if err != nil || r.Controller.Webhook == nil {
		t.Fatalf("from %s: webhook %v, error %v", WebhookURLEnv, r, err)
	}

	o = DefaultOptions()
	o.WebhookURL = url
	if r, err := o.Resolve(env(nil)); err != nil || r.Controller.Webhook == nil {
		t.Fatalf("from --webhook-url: error %v", err)
	}

	o = DefaultOptions()
	o.WebhookURL = url
	_, err = o.Resolve(env(map[string]string{WebhookURLEnv: url}))
	if err == nil || !strings.Contains(err.Error(), "both set") || strings.Contains(err.Error(), "T0KEN") {
		t.Fatalf("both set: %v", err)
	}

	o = DefaultOptions()
	_, err = o.Resolve(env(map[string]string{WebhookURLEnv: "ftp://hooks.example/T0KEN"}))
	if err == nil || !strings.Contains(err.Error(), WebhookURLEnv) || strings.Contains(err.Error(), "T0KEN") {
		t.Fatalf("a bad URL: %v, want an error naming %s without the URL", err, WebhookURLEnv)
	}

	if a := DefaultOptions().PProfAddr; !strings.HasPrefix(a, "127.0.0.1:") {
		t.Fatalf("pprof listens on %q by default, want loopback", a)
	}
}

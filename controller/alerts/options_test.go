package alerts

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestOptionsFromEnvReadsTheOriginalVariables(t *testing.T) {
	o, on, err := OptionsFromEnv(env(map[string]string{
		"ALERT_ON_RELOAD":       "true",
		"ALERT_SINK":            " Slack ",
		"ALERT_WEBHOOK_URL":     " https://hooks.slack.com/services/T/B/x ",
		"ALERT_WEBHOOK_PROXY":   "http://proxy.internal:3128",
		"ALERT_ADDITIONAL_INFO": " prod-eu-1 ",
	}))
	if err != nil || !on {
		t.Fatalf("OptionsFromEnv = %v, %v", on, err)
	}
	want := Options{Sink: SinkSlack, URL: "https://hooks.slack.com/services/T/B/x", Proxy: "http://proxy.internal:3128", AdditionalInfo: "prod-eu-1"}
	if o.Sink != want.Sink || o.URL != want.URL || o.Proxy != want.Proxy || o.AdditionalInfo != want.AdditionalInfo {
		t.Errorf("got %+v, want %+v", o.Redacted(), want.Redacted())
	}
	if _, err := New(o); err != nil {
		t.Errorf("New rejects what OptionsFromEnv accepted: %v", err)
	}
}

func TestAnUnsetSinkIsRawAsInTheOriginal(t *testing.T) {
	o, _, err := OptionsFromEnv(env(map[string]string{"ALERT_ON_RELOAD": "true", "ALERT_WEBHOOK_URL": "https://example.com/h"}))
	if err != nil || o.Sink != SinkRaw {
		t.Fatalf("sink = %q, %v; want raw", o.Sink, err)
	}
}

func TestAlertsAreOffUnlessAlertOnReloadIsTrue(t *testing.T) {
	for _, v := range []string{"", "false", "0"} {
		// The other variables are ignored when off, even if invalid.
		_, on, err := OptionsFromEnv(env(map[string]string{"ALERT_ON_RELOAD": v, "ALERT_SINK": "pager", "ALERT_WEBHOOK_URL": "::"}))
		if on || err != nil {
			t.Errorf("ALERT_ON_RELOAD=%q: enabled=%v err=%v, want off", v, on, err)
		}
	}
}

func TestOptionsFromEnvNamesTheBadVariable(t *testing.T) {
	const secret = "s3cr3t-t0ken"
	base := map[string]string{"ALERT_ON_RELOAD": "true", "ALERT_WEBHOOK_URL": "https://example.com/h"}
	for _, tc := range []struct {
		name, key, value, wantVar string
	}{
		{"unknown sink", "ALERT_SINK", "pagerduty", "ALERT_SINK"},
		{"not a boolean", "ALERT_ON_RELOAD", "yes", "ALERT_ON_RELOAD"},
		{"missing URL", "ALERT_WEBHOOK_URL", "", "ALERT_WEBHOOK_URL"},
		{"relative URL", "ALERT_WEBHOOK_URL", "hooks.slack.com/services/" + secret, "ALERT_WEBHOOK_URL"},
		{"unparsable URL", "ALERT_WEBHOOK_URL", "https://exa mple.com/%zz" + secret, "ALERT_WEBHOOK_URL"},
		{"non-http URL", "ALERT_WEBHOOK_URL", "ftp://example.com/" + secret, "ALERT_WEBHOOK_URL"},
		{"bad proxy", "ALERT_WEBHOOK_PROXY", "proxy:" + secret + "@:3128", "ALERT_WEBHOOK_PROXY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]string{}
			for k, v := range base {
				m[k] = v
			}
			m[tc.key] = tc.value
			_, on, err := OptionsFromEnv(env(m))
			if err == nil || on {
				t.Fatalf("accepted %s=%q", tc.key, tc.value)
			}
			if !strings.Contains(err.Error(), tc.wantVar) {
				t.Errorf("error %q does not name %s", err, tc.wantVar)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q quotes the credential", err)
			}
		})
	}
}

func TestNewRejectsAProxyWithACustomClient(t *testing.T) {
	_, err := New(Options{URL: "https://example.com/h", Proxy: "http://proxy:3128", HTTPClient: &http.Client{}})
	if err == nil {
		t.Fatal("Proxy would be silently ignored with a custom HTTPClient")
	}
}

func TestNewWebhookRefusesAChatSink(t *testing.T) {
	if _, err := NewWebhook(Options{Sink: SinkSlack, URL: "https://example.com/h"}); err == nil {
		t.Fatal("a webhook-mode receiver expects the JSON payload, not a chat message")
	}
}

// FuzzOptionsFromEnv: whatever the environment holds, OptionsFromEnv does
// not panic, what it accepts New accepts, and neither its errors nor the
// redacted options show the token of the URL.
func FuzzOptionsFromEnv(f *testing.F) {
	f.Add("true", "slack", "https://hooks.slack.com/services/", "x", "", "prod")
	f.Add("true", "", "http://127.0.0.1:8080/", "a?b=c", "socks5://u:p@h:1080", "")
	f.Add("TRUE", "JSON", "hooks.example/", "%zz", "http://[::1", " ")
	f.Add("yes", "raw", "", "", "", "")
	f.Fuzz(func(t *testing.T, on, sink, prefix, rest, proxy, info string) {
		const token = "TOKEN-9f8e7d"
		raw := prefix + token + rest
		o, enabled, err := OptionsFromEnv(env(map[string]string{
			"ALERT_ON_RELOAD": on, "ALERT_SINK": sink, "ALERT_WEBHOOK_URL": raw,
			"ALERT_WEBHOOK_PROXY": proxy, "ALERT_ADDITIONAL_INFO": info,
		}))
		if err != nil {
			if enabled {
				t.Fatal("enabled with an error")
			}
			if strings.Contains(err.Error(), token) {
				t.Fatalf("error %q shows the token", err)
			}
			return
		}
		if !enabled {
			return
		}
		if _, err := New(o); err != nil {
			t.Fatalf("New rejects what OptionsFromEnv accepted: %v", err)
		}
		// The host is shown on purpose (it names the service); a token
		// anywhere else must not be.
		if u, _ := url.Parse(o.URL); u != nil && strings.Contains(u.Host, token) {
			return
		}
		if s := o.String(); strings.Contains(s, token) {
			t.Fatalf("String %q shows the token", s)
		}
	})
}

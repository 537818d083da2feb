package app

import (
	"fmt"
	"log/slog"
)

// WebhookURLEnv carries the webhook URL. The URL is a credential (chat and
// incident webhooks authenticate by it), so it comes from the environment,
// which the chart fills from a Secret: in args anyone who can read the
// Deployment, or /debug/pprof/cmdline, would see it.
const WebhookURLEnv = "RELOADER_WEBHOOK_URL"

// webhookURL resolves the webhook URL from --webhook-url (kept for
// stakater compatibility, with a warning) or WebhookURLEnv; where names
// its source for errors, which never repeat the URL.
func (o *Options) webhookURL(getenv func(string) string, logger *slog.Logger) (url, where string, err error) {
	env := getenv(WebhookURLEnv)
	switch {
	case o.WebhookURL != "" && env != "":
		return "", "", fmt.Errorf("--webhook-url and %s are both set: give the URL once, in %s from a Secret", WebhookURLEnv, WebhookURLEnv)
	case o.WebhookURL != "":
		if logger != nil {
			logger.Warn("--webhook-url puts the webhook URL, a credential, on the command line, where anyone who can read the Deployment or /debug/pprof/cmdline sees it; set " +
				WebhookURLEnv + " from a Secret instead (chart: reloader.webhookUrlSecret)")
		}
		return o.WebhookURL, "--webhook-url", nil
	}
	return env, WebhookURLEnv, nil
}

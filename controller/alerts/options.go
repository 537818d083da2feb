package alerts

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Sink is the format of the alert body, named as in ALERT_SINK.
type Sink string

const (
	// SinkSlack is a Slack incoming webhook: one attachment, as the original sends.
	SinkSlack Sink = "slack"
	// SinkTeams is a Microsoft Teams incoming webhook (Office 365 connector): {"text": ...}.
	SinkTeams Sink = "teams"
	// SinkGChat is a Google Chat incoming webhook: {"text": ...}.
	SinkGChat Sink = "gchat"
	// SinkRaw posts the message as text/plain without Slack markup; it is the
	// original's default when ALERT_SINK is unset.
	SinkRaw Sink = "raw"
	// SinkJSON posts a Payload, for receivers that act on the alert rather
	// than display it. Not in the original.
	SinkJSON Sink = "json"
)

// Sinks lists the accepted sinks, in the order they are documented.
var Sinks = []Sink{SinkSlack, SinkTeams, SinkGChat, SinkRaw, SinkJSON}

// ParseSink reads an ALERT_SINK value. Case and surrounding space are
// ignored as in the original, and "" is SinkRaw, the original's default.
// Unlike the original, an unknown name is an error rather than a silent raw
// webhook: a typo must not quietly change what the receiver gets.
func ParseSink(s string) (Sink, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return SinkRaw, nil
	}
	for _, k := range Sinks {
		if Sink(s) == k {
			return k, nil
		}
	}
	return "", fmt.Errorf("unknown sink %q: want slack, teams, gchat, raw or json", s)
}

// Defaults applied by New and NewWebhook to zero fields. The worst case for
// one alert is DefaultAttempts*DefaultTimeout plus the backoffs (1+2+4 s):
// 27 s, after which it is counted as failed.
const (
	DefaultQueueSize = 100
	DefaultWorkers   = 1
	DefaultAttempts  = 4
	DefaultBackoff   = time.Second
	DefaultTimeout   = 5 * time.Second
	// MaxBackoff caps the doubling delay and a receiver's Retry-After.
	MaxBackoff = 30 * time.Second
)

// Options configure a Notifier or a Webhook. The zero value of each tuning
// field selects its default.
type Options struct {
	Sink Sink
	// URL is where alerts are posted. It is a credential (Slack, Teams and
	// Google Chat URLs carry their token): it is never logged, never put in
	// an error, and String, Redacted, MarshalJSON and LogValue hide it.
	URL string
	// Proxy is an http, https or socks5 proxy URL. As in the original,
	// HTTP_PROXY/HTTPS_PROXY are not consulted: only this field routes
	// alerts through a proxy. It is hidden like URL, since it may hold
	// credentials.
	Proxy string
	// AdditionalInfo prefixes messages (e.g. the cluster name) and is
	// carried in the JSON payload.
	AdditionalInfo string

	QueueSize int           // alerts waiting to be sent; further ones are dropped
	Workers   int           // concurrent senders; 1 keeps alerts in order
	Attempts  int           // tries per alert, including the first
	Backoff   time.Duration // delay before the first retry, doubled after each
	Timeout   time.Duration // per attempt

	// HTTPClient replaces the default client (e.g. for a private CA). It is
	// copied, and the copy never follows redirects. Exclusive with Proxy.
	HTTPClient *http.Client
	// Registerer receives reloader_alerts_sent_total and
	// reloader_alerts_dropped_total; nil keeps them unregistered.
	Registerer prometheus.Registerer
	// Logger is nil for no logs.
	Logger *slog.Logger
}

// OptionsFromEnv reads the original's variables: ALERT_ON_RELOAD,
// ALERT_SINK, ALERT_WEBHOOK_URL, ALERT_WEBHOOK_PROXY and
// ALERT_ADDITIONAL_INFO. enabled is false, with no error, when
// ALERT_ON_RELOAD is unset or false; the other variables are then ignored, as
// the original ignores them. Errors name the variable and never quote the URL
// or proxy values, which are credentials.
func OptionsFromEnv(getenv func(string) string) (o Options, enabled bool, err error) {
	on := strings.TrimSpace(getenv("ALERT_ON_RELOAD"))
	if on == "" {
		return Options{}, false, nil
	}
	// The original enables only on exactly "true" and ignores anything else;
	// "yes" or "ture" silently doing nothing is worse than a startup error.
	enabled, perr := strconv.ParseBool(on)
	if perr != nil {
		return Options{}, false, fmt.Errorf("ALERT_ON_RELOAD=%q: want true or false", on)
	}
	if !enabled {
		return Options{}, false, nil
	}
	sink, serr := ParseSink(getenv("ALERT_SINK"))
	if serr != nil {
		return Options{}, false, fmt.Errorf("ALERT_SINK: %w", serr)
	}
	o = Options{
		Sink:           sink,
		URL:            strings.TrimSpace(getenv("ALERT_WEBHOOK_URL")),
		Proxy:          strings.TrimSpace(getenv("ALERT_WEBHOOK_PROXY")),
		AdditionalInfo: strings.TrimSpace(getenv("ALERT_ADDITIONAL_INFO")),
	}
	if o.URL == "" {
		return Options{}, false, errors.New("ALERT_WEBHOOK_URL: required when ALERT_ON_RELOAD=true")
	}
	if _, err := parseEndpoint("ALERT_WEBHOOK_URL", o.URL, "http", "https"); err != nil {
		return Options{}, false, err
	}
	if o.Proxy != "" {
		if _, err := parseEndpoint("ALERT_WEBHOOK_PROXY", o.Proxy, "http", "https", "socks5"); err != nil {
			return Options{}, false, err
		}
	}
	return o, true, nil
}

// parseEndpoint checks that raw is an absolute URL with one of schemes. The
// error names the setting but never contains raw: url.Parse's own error
// quotes its input, so it is not wrapped.
func parseEndpoint(name, raw string, schemes ...string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return nil, fmt.Errorf("%s: not an absolute %s URL (value not shown: it may hold a credential)", name, strings.Join(schemes, " or "))
	}
	for _, s := range schemes {
		if strings.EqualFold(u.Scheme, s) {
			return u, nil
		}
	}
	return nil, fmt.Errorf("%s: scheme must be %s (value not shown: it may hold a credential)", name, strings.Join(schemes, " or "))
}

// withDefaults fills zero tuning fields and rejects what cannot work.
func (o Options) withDefaults() (Options, error) {
	if o.Sink == "" {
		o.Sink = SinkRaw
	}
	if _, err := ParseSink(string(o.Sink)); err != nil {
		return o, fmt.Errorf("alerts: Sink: %w", err)
	}
	if o.URL == "" {
		return o, errors.New("alerts: URL is required")
	}
	if _, err := parseEndpoint("alerts: URL", o.URL, "http", "https"); err != nil {
		return o, err
	}
	if o.Proxy != "" {
		if o.HTTPClient != nil {
			return o, errors.New("alerts: Proxy and HTTPClient are exclusive: set the proxy on the client's transport")
		}
		if _, err := parseEndpoint("alerts: Proxy", o.Proxy, "http", "https", "socks5"); err != nil {
			return o, err
		}
	}
	if o.QueueSize < 0 || o.Workers < 0 || o.Attempts < 0 || o.Backoff < 0 || o.Timeout < 0 {
		return o, errors.New("alerts: QueueSize, Workers, Attempts, Backoff and Timeout must not be negative")
	}
	if o.QueueSize == 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.Workers == 0 {
		o.Workers = DefaultWorkers
	}
	if o.Attempts == 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Backoff == 0 {
		o.Backoff = DefaultBackoff
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}

// Redacted returns the options with URL and Proxy reduced to scheme and host
// and the runtime fields (client, registerer, logger) cleared: what may be
// published, e.g. in the ConfigMap of effective options.
func (o Options) Redacted() Options {
	o.URL = redactURL(o.URL)
	o.Proxy = redactURL(o.Proxy)
	o.HTTPClient, o.Registerer, o.Logger = nil, nil, nil
	return o
}

// String is the redacted form, so %v and %s of Options are safe to log.
func (o Options) String() string {
	r := o.Redacted()
	return fmt.Sprintf("alerts.Options{Sink:%s URL:%s Proxy:%s AdditionalInfo:%q QueueSize:%d Workers:%d Attempts:%d Backoff:%s Timeout:%s}",
		r.Sink, r.URL, r.Proxy, r.AdditionalInfo, r.QueueSize, r.Workers, r.Attempts, r.Backoff, r.Timeout)
}

// GoString keeps %#v, which bypasses String, from printing the URL.
func (o Options) GoString() string { return o.String() }

// LogValue keeps slog, which bypasses String, from printing the URL.
func (o Options) LogValue() slog.Value {
	r := o.Redacted()
	return slog.GroupValue(
		slog.String("sink", string(r.Sink)),
		slog.String("url", r.URL),
		slog.String("proxy", r.Proxy),
		slog.String("additionalInfo", r.AdditionalInfo),
		slog.Int("queueSize", r.QueueSize),
		slog.Int("workers", r.Workers),
		slog.Int("attempts", r.Attempts),
		slog.Duration("backoff", r.Backoff),
		slog.Duration("timeout", r.Timeout),
	)
}

// MarshalJSON is the redacted form, so publishing the effective options
// cannot publish the credential.
func (o Options) MarshalJSON() ([]byte, error) {
	r := o.Redacted()
	return json.Marshal(struct {
		Sink           Sink   `json:"sink"`
		URL            string `json:"url,omitempty"`
		Proxy          string `json:"proxy,omitempty"`
		AdditionalInfo string `json:"additionalInfo,omitempty"`
		QueueSize      int    `json:"queueSize,omitempty"`
		Workers        int    `json:"workers,omitempty"`
		Attempts       int    `json:"attempts,omitempty"`
		Backoff        string `json:"backoff,omitempty"`
		Timeout        string `json:"timeout,omitempty"`
	}{r.Sink, r.URL, r.Proxy, r.AdditionalInfo, r.QueueSize, r.Workers, r.Attempts, durationOrEmpty(r.Backoff), durationOrEmpty(r.Timeout)})
}

func durationOrEmpty(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// redactURL keeps scheme and host, which identify the service, and hides
// user info, path, query and fragment, where webhook tokens live.
func redactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "<redacted>"
	}
	s := u.Scheme + "://"
	if u.User != nil {
		s += "<redacted>@"
	}
	s += u.Host
	if u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		s += "/<redacted>"
	}
	return s
}

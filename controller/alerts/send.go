package alerts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// StatusError is a receiver's non-2xx answer. The body is not kept: it may
// echo the request or the URL.
type StatusError struct {
	StatusCode int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("receiver answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// redactedError carries a message from which the URL has been removed. The
// *url.Error that net/http returns quotes the full URL, so it is never
// wrapped: Unwrap yields only its cause (a net, TLS or context error).
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// sender posts to one URL with retries; Notifier and Webhook share it.
type sender struct {
	client   *http.Client
	url      string
	where    string   // scheme://host, what errors and logs may show
	secrets  []string // substrings of the URL and proxy scrubbed from any message
	attempts int
	backoff  time.Duration
	timeout  time.Duration
	log      *slog.Logger
}

func newSender(o Options) (*sender, error) {
	u, err := parseEndpoint("alerts: URL", o.URL, "http", "https")
	if err != nil {
		return nil, err
	}
	s := &sender{
		url:      o.URL,
		where:    u.Scheme + "://" + u.Host,
		secrets:  secretParts(o.URL),
		attempts: o.Attempts,
		backoff:  o.Backoff,
		timeout:  o.Timeout,
		log:      o.Logger,
	}
	if o.HTTPClient != nil {
		c := *o.HTTPClient
		s.client = &c
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		if o.Proxy != "" {
			p, err := parseEndpoint("alerts: Proxy", o.Proxy, "http", "https", "socks5")
			if err != nil {
				return nil, err
			}
			t.Proxy = http.ProxyURL(p)
			s.secrets = append(s.secrets, secretParts(o.Proxy)...)
		}
		s.client = &http.Client{Transport: t}
	}
	// A redirect would resend the alert to a host nobody configured; the
	// original refuses them too ("incorrect token (redirection)").
	s.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return s, nil
}

// secretParts are the pieces of a URL that may be a token, longest first so
// that scrubbing the whole URL wins over scrubbing its path.
func secretParts(raw string) []string {
	parts := []string{raw}
	if u, err := url.Parse(raw); err == nil {
		if u.User != nil {
			parts = append(parts, u.User.String())
			if p, ok := u.User.Password(); ok {
				parts = append(parts, p)
			}
		}
		if u.Path != "/" {
			parts = append(parts, u.EscapedPath(), u.Path)
		}
		parts = append(parts, u.RawQuery, u.Fragment)
	}
	out := parts[:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (s *sender) scrub(msg string) string {
	for _, p := range s.secrets {
		msg = strings.ReplaceAll(msg, p, "<redacted>")
	}
	return msg
}

// post delivers body, retrying transport errors, timeouts, 408, 425, 429 and
// 5xx with a doubling delay; other answers will not change by asking again.
func (s *sender) post(ctx context.Context, contentType string, body []byte, attrs ...any) error {
	delay := s.backoff
	for attempt := 1; ; attempt++ {
		retryAfter, retry, err := s.once(ctx, contentType, body)
		if err == nil {
			return nil
		}
		if !retry || attempt >= s.attempts || ctx.Err() != nil {
			return &redactedError{
				msg: s.scrub(fmt.Sprintf("alerts: POST %s failed after %d attempt(s): %v", s.where, attempt, err)),
				err: errors.Unwrap(err),
			}
		}
		wait := min(max(delay, retryAfter), MaxBackoff)
		s.log.Debug("alert delivery failed, retrying", append(attrs, "attempt", attempt, "retryIn", wait, "error", s.scrub(err.Error()))...)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return &redactedError{
				msg: s.scrub(fmt.Sprintf("alerts: POST %s abandoned after %d attempt(s): %v (last error: %v)", s.where, attempt, ctx.Err(), err)),
				err: ctx.Err(),
			}
		case <-t.C:
		}
		delay *= 2
	}
}

// once makes one attempt. Its error is already free of the URL and wraps
// the cause so that post can expose it through Unwrap.
func (s *sender) once(ctx context.Context, contentType string, body []byte) (retryAfter time.Duration, retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return 0, false, errors.New("invalid request")
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "reloader")
	resp, err := s.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, true, fmt.Errorf("%w", err)
	}
	// Drained (bounded) so the connection is reused; never read into errors.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return 0, false, nil
	case code == http.StatusRequestTimeout, code == http.StatusTooEarly, code == http.StatusTooManyRequests, code >= 500:
		return parseRetryAfter(resp.Header.Get("Retry-After")), true, fmt.Errorf("%w", &StatusError{StatusCode: code})
	default:
		return 0, false, fmt.Errorf("%w", &StatusError{StatusCode: code})
	}
}

// parseRetryAfter reads the delay-seconds form, the one Slack and Teams use;
// an HTTP date is ignored in favour of the backoff.
func parseRetryAfter(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		return 0
	}
	return min(time.Duration(n)*time.Second, MaxBackoff)
}

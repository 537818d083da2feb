package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
)

// Request counts are keyed "VERB resource[/subresource]", verbs spelled as
// the audit log spells them, upper-cased (GET, LIST, WATCH, CREATE, UPDATE,
// PATCH, DELETE).
type counts map[string]float64

func (c counts) minus(o counts) counts {
	out := counts{}
	for k, v := range c {
		if d := v - o[k]; d != 0 {
			out[k] = d
		}
	}
	for k, v := range o {
		if _, ok := c[k]; !ok && v != 0 {
			out[k] = -v
		}
	}
	return out
}

func (c counts) per(n int) counts {
	out := counts{}
	for k, v := range c {
		out[k] = v / float64(n)
	}
	return out
}

// verb sums the counts of one verb over every resource.
func (c counts) verb(v string) float64 {
	var sum float64
	for k, n := range c {
		if strings.HasPrefix(k, v+" ") {
			sum += n
		}
	}
	return sum
}

// requestCounter counts the driver's own requests at its transport, so they
// can be subtracted from the apiserver's metrics, which cannot be split by
// client.
type requestCounter struct {
	mu sync.Mutex
	n  counts
}

func newRequestCounter() *requestCounter { return &requestCounter{n: counts{}} }

func (r *requestCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if key, ok := classify(req); ok {
			r.mu.Lock()
			r.n[key]++
			r.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (r *requestCounter) snapshot() counts {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(counts, len(r.n))
	for k, v := range r.n {
		out[k] = v
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// classify maps a resource request to its apiserver verb and resource, as
// the apiserver's request-info resolver would; non-resource requests
// (discovery, /metrics) are not counted, as apiserver_request_total gives
// them no resource either.
func classify(req *http.Request) (string, bool) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:] // api/v1
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:] // apis/group/version
	default:
		return "", false
	}
	if len(parts) >= 2 && parts[0] == "namespaces" && len(parts) != 2 {
		parts = parts[2:] // namespaces/<ns>/<resource>...; namespaces/<name> is the namespace itself
	}
	if len(parts) == 0 {
		return "", false
	}
	resource, named := parts[0], len(parts) >= 2
	if len(parts) >= 3 {
		resource += "/" + parts[2]
	}
	return verb(req.Method, named, req.URL.Query().Get("watch") == "true") + " " + resource, true
}

func verb(method string, named, watch bool) string {
	switch method {
	case http.MethodGet:
		switch {
		case watch:
			return "WATCH"
		case named:
			return "GET"
		}
		return "LIST"
	case http.MethodPost:
		return "CREATE"
	case http.MethodPut:
		return "UPDATE"
	case http.MethodPatch:
		return "PATCH"
	case http.MethodDelete:
		if named {
			return "DELETE"
		}
		return "DELETECOLLECTION"
	}
	return method
}

// apiserverRequests reads apiserver_request_total from the apiserver's own
// /metrics, summed over codes, scopes and versions.
func apiserverRequests(ctx context.Context, cs kubernetes.Interface) (counts, error) {
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("scraping the apiserver's /metrics: %w", err)
	}
	out := counts{}
	const name = "apiserver_request_total{"
	for line := range strings.SplitSeq(string(raw), "\n") {
		if !strings.HasPrefix(line, name) {
			continue
		}
		end := strings.LastIndexByte(line, '}')
		if end < 0 {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			continue
		}
		l := labels(line[len(name):end])
		if l["resource"] == "" {
			continue
		}
		key := metricsVerb(l["verb"]) + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		out[key] += v
	}
	return out, nil
}

// metricsVerb spells apiserver_request_total's HTTP-style verbs as the audit
// log does, so the columns of the report line up.
func metricsVerb(v string) string {
	switch v {
	case "POST":
		return "CREATE"
	case "PUT":
		return "UPDATE"
	}
	return v
}

// labels parses a Prometheus label set body: k="v",k2="v2" (the apiserver's
// values never contain commas or escaped quotes).
func labels(s string) map[string]string {
	out := map[string]string{}
	for kv := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

// auditEvent is the part of an audit.k8s.io/v1 Event the driver reads.
type auditEvent struct {
	AuditID string `json:"auditID"`
	Verb    string `json:"verb"`
	User    struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	RequestReceived time.Time `json:"requestReceivedTimestamp"`
}

// auditOffset is where the audit log ends now; a window's requests are the
// ones appended after it.
func auditOffset(path string) (int64, error) {
	st, err := os.Stat(path)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the audit log: %w", err)
	}
	return st.Size(), nil
}

// auditRequests counts user's requests received in [from, to] in the audit
// log after offset, once per request (a watch has a ResponseStarted and a
// ResponseComplete event; both carry its auditID).
func auditRequests(path string, offset int64, user string, from, to time.Time) (counts, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the audit log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, fmt.Errorf("seeking in the audit log: %w", err)
	}
	out, seen := counts{}, map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("parsing the audit log: %w", err)
		}
		if e.User.Username != user || seen[e.AuditID] || e.ObjectRef == nil || e.RequestReceived.Before(from) || e.RequestReceived.After(to) {
			continue
		}
		seen[e.AuditID] = true
		key := strings.ToUpper(e.Verb) + " " + e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			key += "/" + e.ObjectRef.Subresource
		}
		out[key]++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	return out, nil
}

// window measures the requests made during one scenario three ways: the
// controller identity's own (audit log), the driver's own (its transport),
// and everything the apiserver served (its metrics). The apiserver's metrics
// have no client label, so "residual" = metrics − driver is the controller
// plus the apiserver's own loopback traffic (its lease renewals, about one
// GET and one UPDATE of leases every 10 s); the audit figure is exact.
type window struct {
	c       *cluster
	user    string
	from    time.Time
	offset  int64
	metrics counts
	driver  counts
}

func (c *cluster) openWindow(ctx context.Context, user string) (*window, error) {
	off, err := auditOffset(c.auditPath)
	if err != nil {
		return nil, err
	}
	m, err := apiserverRequests(ctx, c.driver)
	if err != nil {
		return nil, err
	}
	return &window{c: c, user: user, from: time.Now(), offset: off, metrics: m, driver: c.counter.snapshot()}, nil
}

func (w *window) close(ctx context.Context, changes int) (RequestStats, error) {
	to := time.Now()
	driver := w.c.counter.snapshot().minus(w.driver)
	m, err := apiserverRequests(ctx, w.c.driver)
	if err != nil {
		return RequestStats{}, err
	}
	audit, err := auditRequests(w.c.auditPath, w.offset, w.user, w.from, to)
	if err != nil {
		return RequestStats{}, err
	}
	residual := m.minus(w.metrics).minus(driver)
	return RequestStats{
		Changes:  changes,
		Audit:    audit.per(changes),
		Residual: residual.per(changes),
		Driver:   driver.per(changes),
	}, nil
}

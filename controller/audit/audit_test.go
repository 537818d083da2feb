package audit_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/controller/audit"
)

func reload() audit.Record {
	return audit.Record{
		Time:      time.Date(2026, 12, 2, 19, 0, 0, 0, time.UTC),
		Workload:  audit.Object{Kind: "Deployment", Namespace: "shop", Name: "api"},
		Resource:  audit.Resource{Kind: "Secret", Name: "db", ResourceVersion: "4711"},
		ChangedBy: &audit.Writer{Manager: "bob", Operation: "Update", Time: time.Date(2026, 12, 2, 18, 59, 58, 0, time.UTC)},
		OldHash:   "3f2a9c0d1e2b4a5c6d7e8f90112233445566778899",
		NewHash:   "8b1d0e7c6a5f",
		Strategy:  "env-vars", Decision: audit.Reloaded, Reason: "changed",
	}
}

// The line format is an interface: these field names, in this order, under
// this schema. A change here needs a new schema version.
func TestALineHasTheDocumentedFieldNamesInOrder(t *testing.T) {
	var b bytes.Buffer
	if err := audit.New(&b).Write(reload()); err != nil {
		t.Fatal(err)
	}
	want := `{"schema":"reloader.dev/audit/v1","time":"2026-12-02T19:00:00Z",` +
		`"workload":{"kind":"Deployment","namespace":"shop","name":"api"},` +
		`"resource":{"kind":"Secret","name":"db","resourceVersion":"4711"},` +
		`"changedBy":{"manager":"bob","operation":"Update","time":"2026-12-02T18:59:58Z"},` +
		`"oldHash":"3f2a9c0d1e2b","newHash":"8b1d0e7c6a5f","strategy":"env-vars","decision":"reloaded","reason":"changed"}` + "\n"
	if b.String() != want {
		t.Errorf("line:\n got %s\nwant %s", b.String(), want)
	}
}

// What is not known is left out rather than written empty: no writer, no
// hashes (a first sight, a deleted resource).
func TestUnknownFieldsAreLeftOut(t *testing.T) {
	var b bytes.Buffer
	r := audit.Record{Workload: audit.Object{Kind: "CronJob", Namespace: "ns", Name: "n"},
		Resource: audit.Resource{Kind: "ConfigMap", Name: "c"}, Strategy: "annotations", Decision: audit.Skipped, Reason: "first_sight"}
	if err := audit.New(&b).Write(r); err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"changedBy", "oldHash", "newHash", "resourceVersion"} {
		if strings.Contains(b.String(), absent) {
			t.Errorf("%s written though unknown: %s", absent, b.String())
		}
	}
}

// A line never carries a whole hash, whatever the caller passes: only its
// first HashPrefixLen characters.
func TestHashesAreCutToAPrefix(t *testing.T) {
	var b bytes.Buffer
	full := strings.Repeat("a1", 20)
	r := reload()
	r.OldHash, r.NewHash = full, full
	if err := audit.New(&b).Write(r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), full[:audit.HashPrefixLen+1]) {
		t.Errorf("more than %d characters of a hash written: %s", audit.HashPrefixLen, b.String())
	}
	var got audit.Record
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.OldHash != full[:audit.HashPrefixLen] || got.NewHash != full[:audit.HashPrefixLen] {
		t.Errorf("prefixes %q %q, want %q", got.OldHash, got.NewHash, full[:audit.HashPrefixLen])
	}
}

// Record has no field that could carry a value: every string field is a
// name, a version, a hash prefix or a fixed word. This pins the set, so a
// field added later is looked at.
func TestARecordHasOnlyTheDocumentedFields(t *testing.T) {
	b, err := json.Marshal(reload())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := []string{"schema", "time", "workload", "resource", "changedBy", "oldHash", "newHash", "strategy", "decision", "reason"}
	if len(m) != len(want) {
		t.Errorf("fields %v, want %v", keys(m), want)
	}
	for _, k := range want {
		if _, ok := m[k]; !ok {
			t.Errorf("field %q missing from %s", k, b)
		}
	}
}

func keys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// writes records each Write call, to check that a line is one call.
type writes struct {
	mu    sync.Mutex
	calls []string
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, string(p))
	return len(p), nil
}

// Workers write concurrently; each line is one whole Write, so lines never
// interleave on stdout.
func TestConcurrentWritesAreWholeLines(t *testing.T) {
	w := &writes{}
	l := audit.New(w)
	const n = 64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if err := l.Write(reload()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if len(w.calls) != n {
		t.Fatalf("%d Write calls for %d records", len(w.calls), n)
	}
	for _, c := range w.calls {
		var r audit.Record
		if strings.Count(c, "\n") != 1 || !strings.HasSuffix(c, "\n") || json.Unmarshal([]byte(c), &r) != nil || r.Schema != audit.Schema {
			t.Errorf("not one whole record line: %q", c)
		}
	}
}

// Audit off is a nil Logger: nothing to check at the call sites.
func TestANilLoggerWritesNothing(t *testing.T) {
	var l *audit.Logger
	if err := l.Write(reload()); err != nil {
		t.Errorf("nil logger: %v", err)
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("stdout closed") }

// A failed write names the workload, so the log line saying so is useful.
func TestAFailedWriteNamesTheWorkload(t *testing.T) {
	err := audit.New(failing{}).Write(reload())
	if err == nil || !strings.Contains(err.Error(), "shop/api") {
		t.Errorf("error %v, want one naming shop/api", err)
	}
}

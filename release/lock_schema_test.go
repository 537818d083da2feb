package release

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/release/support"
)

// Locks written before v2 stay readable; only v2 may carry advisories, and
// those it carries are held to the OSV rules.
func TestAV1LockIsStillReadAndOnlyV2CarriesAdvisories(t *testing.T) {
	l := sampleLock()
	l.Schema = LockSchemaV1
	if err := l.Validate(); err != nil {
		t.Fatalf("a v1 lock without advisories: %v", err)
	}
	l.Advisories = []json.RawMessage{json.RawMessage(`{"id":"X-1"}`)}
	if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "carries no advisories") {
		t.Errorf("a v1 lock with advisories: %v, want a refusal", err)
	}
	l.Schema = LockSchema
	if err := l.Validate(); err == nil || !strings.Contains(err.Error(), "advisory 0") {
		t.Errorf("a v2 lock with an invalid advisory: %v, want a refusal naming it", err)
	}
}

// The lock carries, per release series, the support period's end as a
// YYYY-MM-DD date under support.series[].endOfSupport (the CRA's support
// period, machine-readable and signed); a lock whose series has none is
// refused.
func TestTheLockCarriesEachSeriesEndOfSupportAsADate(t *testing.T) {
	l := sampleLock()
	table, err := support.ParseTable([]byte("apiVersion: reloader.dev/support/v1\nseries:\n  - {series: v1.2, released: \"2026-11-01\", endOfSupport: \"2027-11-01\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	l.Support = table
	data, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Support struct {
			Series []map[string]any `json:"series"`
		} `json:"support"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Support.Series) != 1 || doc.Support.Series[0]["series"] != "v1.2" || doc.Support.Series[0]["endOfSupport"] != "2027-11-01" {
		t.Errorf("support in the lock's JSON: %v, want series v1.2 with endOfSupport 2027-11-01", doc.Support.Series)
	}
	broken := strings.Replace(string(data), `"endOfSupport": "2027-11-01"`, `"endOfSupport": "0001-01-01"`, 1)
	if broken == string(data) {
		t.Fatalf("the lock's JSON does not hold the end of support as written: %s", data)
	}
	if _, err := Parse([]byte(broken)); err == nil || !strings.Contains(err.Error(), "endOfSupport") {
		t.Errorf("a lock whose series has no end of support: %v, want a refusal naming endOfSupport", err)
	}
}

package release

import (
	"encoding/json"
	"strings"
	"testing"
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

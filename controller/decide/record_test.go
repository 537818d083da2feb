package decide

import (
	"strings"
	"testing"
)

// The applied-hashes record is an annotation anyone who can edit the
// workload can write: whatever it holds, reading it never panics, refuses
// what is too large, and what it accepts encodes back to a record that reads
// the same.
func FuzzParseRecord(f *testing.F) {
	for _, s := range []string{"", "{}", `{"configmap/app-config":"h1","secret/*":"creds"}`, `{"a":1}`, "[", strings.Repeat("x", maxRecordBytes+1)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseRecord(s)
		if err != nil {
			if len(m) != 0 {
				t.Fatalf("an unreadable record read as %v", m)
			}
			return
		}
		if len(s) > maxRecordBytes {
			t.Fatalf("a record of %d bytes was accepted", len(s))
		}
		again, err := parseRecord(encodeRecord(m))
		if err != nil || len(again) != len(m) {
			t.Fatalf("re-encoded record %v reads as %v, %v", m, again, err)
		}
		for k, v := range m {
			if again[k] != v {
				t.Fatalf("entry %q: %q, then %q", k, v, again[k])
			}
		}
	})
}

package csaf_test

import (
	"testing"

	"github.com/reloader-dev/reloader/release/csaf"
)

// ParseAdvisory reads documents from outside (a directory given to
// reloader-mirror --advisories): no input may panic it, and what it accepts
// is an advisory the judgment can evaluate.
func FuzzParseCSAFAdvisory(f *testing.F) {
	doc, err := csaf.FromOSV(exampleAdvisory(f), publisher)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(doc)
	f.Add([]byte(`{"document":{"csaf_version":"2.0"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := csaf.ParseAdvisory(data)
		if err != nil {
			return
		}
		_ = a.Affects("v1.0.0")
		if a.ID == "" || len(a.Affected) == 0 {
			t.Fatalf("accepted an advisory without an id or an affected version: %+v", a)
		}
	})
}

package mirror

import (
	"testing"

	"github.com/reloader-dev/reloader/release"
)

// FuzzLockArtifact: parsing a lock artifact manifest or a lock from outside
// input never panics, and an accepted lock re-encodes to a lock that parses.
func FuzzLockArtifact(f *testing.F) {
	art, _ := NewLockArtifact([]byte(`{"schema":"x"}`), []byte(`{}`))
	f.Add(art.Manifest)
	f.Add([]byte(`{"schema":"https://reloader.dev/schemas/release-lock/v1","version":"v1.0.0"}`))
	f.Add([]byte(`{"schema":"https://reloader.dev/schemas/release-lock/v2","version":"v1.0.0","advisories":[{"id":"X-1"}],` +
		`"support":{"apiVersion":"reloader.dev/support/v1","series":[{"series":"v1.0","released":"2026-01-01","endOfSupport":"2027-01-01"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = ParseLockArtifactManifest(data)
		l, err := release.Parse(data)
		if err != nil {
			return
		}
		b, err := l.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := release.Parse(b); err != nil {
			t.Fatalf("re-encoded lock does not parse: %v", err)
		}
	})
}

package trust

import (
	"sync"

	"github.com/reloader-dev/reloader/release"
)

// Verification is one verification a Verifier made: of a lock's signature
// ("lock") or of every signature a lock lists ("release"), and the version
// it was about ("" when the lock could not be read).
type Verification struct {
	What    string `json:"what"`
	Version string `json:"version"`
	OK      bool   `json:"ok"`
}

// record is what a Verifier verified, in order: the result can be inspected
// (and is, by the test that holds every command to verifying each release
// once).
type record struct {
	mu   sync.Mutex
	list []Verification
}

func (r *record) add(what string, l *release.Lock, ok bool) {
	v := Verification{What: what, OK: ok}
	if l != nil {
		v.Version = l.Version
	}
	r.mu.Lock()
	r.list = append(r.list, v)
	r.mu.Unlock()
}

// Verifications lists the locks and releases this verifier has verified,
// in order, each with its verdict.
func (v *Verifier) Verifications() []Verification {
	v.rec.mu.Lock()
	defer v.rec.mu.Unlock()
	return append([]Verification(nil), v.rec.list...)
}

package main

import (
	"sync"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/release/trust"
)

// verifiers makes every verifier a command uses and keeps them, so what was
// verified, and how often, can be inspected: each release's lock and
// signatures are verified once (issue 48's verification count).
type verifiers struct {
	mu   sync.Mutex
	made []*trust.Verifier
}

// make prepares a verifier for p; an incomplete policy is a usage error.
func (vs *verifiers) make(p trust.Policy) (*trust.Verifier, error) {
	v, err := trust.NewVerifier(p)
	if err != nil {
		return nil, cli.Usage(err)
	}
	vs.mu.Lock()
	vs.made = append(vs.made, v)
	vs.mu.Unlock()
	return v, nil
}

// verifications is what every verifier made verified, in the order the
// verifiers were made.
func (vs *verifiers) verifications() []trust.Verification {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	var out []trust.Verification
	for _, v := range vs.made {
		out = append(out, v.Verifications()...)
	}
	return out
}

package hash

import (
	"crypto/fips140"
	"crypto/sha1" //nolint:gosec // see package comment
	"crypto/sha256"
	"fmt"
	stdhash "hash"
)

// Algorithm is the digest of the data fingerprints. SHA1 is stakater's and
// the default: a cluster migrating from it keeps its hashes and restarts
// nothing. SHA256 is for FIPS 140-only mode (GODEBUG=fips140=only), where Go
// refuses SHA-1 outright; a controller switched to it sees every recorded
// hash change once, so it rolls each workload it manages once (the rollout
// budget bounds how many at a time), and from then on hashes are stable.
type Algorithm string

const (
	SHA1   Algorithm = "sha1"
	SHA256 Algorithm = "sha256"
)

// DefaultAlgorithm is SHA256 when the process enforces FIPS 140-only mode
// (SHA-1 would panic there), else stakater's SHA1.
func DefaultAlgorithm() Algorithm {
	if fips140.Enforced() {
		return SHA256
	}
	return SHA1
}

// ParseAlgorithm reads --hash-algorithm; "" is DefaultAlgorithm.
func ParseAlgorithm(s string) (Algorithm, error) {
	switch a := Algorithm(s); a {
	case "":
		return DefaultAlgorithm(), nil
	case SHA1, SHA256:
		return a, a.Usable()
	}
	return "", fmt.Errorf("hash algorithm %q: want %q or %q", s, SHA1, SHA256)
}

// Usable says why a cannot run in this process: SHA-1 under FIPS 140-only
// mode, which Go's crypto/sha1 refuses with a panic at first use.
func (a Algorithm) Usable() error {
	if a == SHA1 && fips140.Enforced() {
		return fmt.Errorf("hash algorithm %q is not allowed in FIPS 140-only mode (GODEBUG=fips140=only): use %q, which rolls each managed workload once when first switched", SHA1, SHA256)
	}
	return nil
}

func (a Algorithm) new() stdhash.Hash {
	if a == SHA256 {
		return sha256.New()
	}
	return sha1.New() //nolint:gosec // see package comment
}

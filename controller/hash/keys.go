package hash

import (
	"encoding/binary"
	"encoding/hex"
	"io"
	"slices"
	"strings"
)

// Per-key reloads (--reload-on-used-keys-only) need the content of some keys
// of a resource, long after its values were dropped. So, next to the whole
// hash, the cache keeps one short digest per key (made by a KeyDigester,
// keyed.go). 64 bits tell a change from no change; they are no defence
// against someone who can write the resource, who controls its content
// anyway.

// KeyDigest is the digest of one key's value: Sum, keyed under the
// installation's key when the controller has one, and Unkeyed, the first 8
// bytes of the value's SHA-256, the digest of releases before keyed ones.
// Unkeyed is kept only to adopt the records those releases wrote
// (decide/keys.go); it never leaves the process.
type KeyDigest struct {
	Key     string
	Sum     uint64
	Unkeyed uint64
}

// Keys are the digests of every key of one resource, sorted by key: a
// slice, not a map, because it is small, read whole and never updated.
type Keys []KeyDigest

func sortKeys(k Keys) Keys {
	slices.SortFunc(k, func(a, b KeyDigest) int { return strings.Compare(a.Key, b.Key) })
	return k
}

// Subset fingerprints the keys named in used (sorted, no duplicates): a's
// hex digest over "key=digest" of each used key present, in key order, joined by
// ";", after a "keys:" prefix that keeps it apart from a whole-resource
// hash. Key names are part of the input, so a key renamed away counts as a
// change; a used key that is absent contributes nothing, so its appearance
// is one too. The digests are the keyed ones (Sum): without the key, the
// result tells nothing about the values.
func (k Keys) Subset(a Algorithm, used []string) string {
	return k.subset(a, used, func(d KeyDigest) uint64 { return d.Sum })
}

// UnkeyedSubset is Subset over the unkeyed digests: what releases before
// keyed digests recorded, for adoption only.
func (k Keys) UnkeyedSubset(a Algorithm, used []string) string {
	return k.subset(a, used, func(d KeyDigest) uint64 { return d.Unkeyed })
}

func (k Keys) subset(a Algorithm, used []string, sum func(KeyDigest) uint64) string {
	h := a.new()
	_, _ = io.WriteString(h, "keys:")
	var raw [8]byte
	var hexed [16]byte
	i := 0
	for _, u := range used {
		for i < len(k) && k[i].Key < u {
			i++
		}
		if i == len(k) {
			break
		}
		if k[i].Key != u {
			continue
		}
		_, _ = io.WriteString(h, u)
		_, _ = io.WriteString(h, "=")
		binary.BigEndian.PutUint64(raw[:], sum(k[i]))
		hex.Encode(hexed[:], raw[:])
		_, _ = h.Write(hexed[:])
		_, _ = io.WriteString(h, ";")
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Has reports whether key is present.
func (k Keys) Has(key string) bool {
	_, ok := slices.BinarySearchFunc(k, key, func(d KeyDigest, key string) int { return strings.Compare(d.Key, key) })
	return ok
}

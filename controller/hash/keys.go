package hash

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"slices"
	"strings"
)

// Per-key reloads (--reload-on-used-keys-only) need the content of some keys
// of a resource, long after its values were dropped. So, next to the whole
// hash, the cache keeps one short digest per key: the first 8 bytes of the
// SHA-256 of its value. 64 bits tell a change from no change; they are no
// defence against someone who can write the resource, who controls its
// content anyway.

// KeyDigest is the digest of one key's value.
type KeyDigest struct {
	Key string
	Sum uint64
}

// Keys are the digests of every key of one resource, sorted by key: a
// slice, not a map, because it is small, read whole and never updated.
type Keys []KeyDigest

// ConfigMapKeys digests every key of data and binaryData. A key moving
// between the two with the same bytes is the same content to a pod.
func ConfigMapKeys(data map[string]string, binaryData map[string][]byte) Keys {
	if len(data)+len(binaryData) == 0 {
		return nil
	}
	out := make(Keys, 0, len(data)+len(binaryData))
	d := newDigester()
	for k, v := range data {
		out = append(out, KeyDigest{strings.Clone(k), d.string(v)})
	}
	for k, v := range binaryData {
		out = append(out, KeyDigest{strings.Clone(k), d.bytes(v)})
	}
	slices.SortFunc(out, func(a, b KeyDigest) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// SecretKeys digests every key of a Secret's data.
func SecretKeys(data map[string][]byte) Keys {
	if len(data) == 0 {
		return nil
	}
	out := make(Keys, 0, len(data))
	d := newDigester()
	for k, v := range data {
		out = append(out, KeyDigest{strings.Clone(k), d.bytes(v)})
	}
	slices.SortFunc(out, func(a, b KeyDigest) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// digester digests values with one SHA-256 state, reset per value. Keys
// are cloned on the way in (strings.Clone above) so the cache never pins a
// decoded object's buffers through a key's bytes.
type digester struct {
	w   *stringWriter
	sum [sha256.Size]byte
}

func newDigester() *digester { return &digester{w: newStringWriter(sha256.New())} }

func (d *digester) bytes(v []byte) uint64 {
	d.w.h.Reset()
	_, _ = d.w.h.Write(v)
	return binary.BigEndian.Uint64(d.w.h.Sum(d.sum[:0])[:8])
}

func (d *digester) string(v string) uint64 {
	d.w.h.Reset()
	d.w.string(v)
	return binary.BigEndian.Uint64(d.w.h.Sum(d.sum[:0])[:8])
}

// Subset fingerprints the keys named in used (sorted, no duplicates): a's
// hex digest over "key=digest" of each used key present, in key order, joined by
// ";", after a "keys:" prefix that keeps it apart from a whole-resource
// hash. Key names are part of the input, so a key renamed away counts as a
// change; a used key that is absent contributes nothing, so its appearance
// is one too.
func (k Keys) Subset(a Algorithm, used []string) string {
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
		binary.BigEndian.PutUint64(raw[:], k[i].Sum)
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

package hash

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	stdhash "hash"
	"strings"
)

// In per-key mode a workload's record (and its STAKATER_* variable or
// last-reloaded-from annotation) holds the Subset of the per-key digests,
// and anyone who can read the workload reads it. Were the digests plain
// SHA-256 of the values, a low-entropy value (a 4-digit PIN) would be found
// by digesting every candidate, and a random salt key in the resource
// (SECURITY.md) would not help, since an unused key is left out of the
// subset. So the digests are keyed: HMAC-SHA-256, under a random
// per-installation key (controller/fingerprint keeps it in a Secret), of the
// value's SHA-256, first 8 bytes. Without the key no candidate can be
// tested. HMAC-SHA-256 is FIPS 140-3 approved, so every build uses it.
//
// The MAC is over the value's SHA-256, not the value itself, so a value is
// read once for both digests a KeyDigest keeps, the unkeyed one being that
// SHA-256's first 8 bytes; SHA-256 being collision resistant, a MAC of the
// digest tells values apart as a MAC of the value does.
//
// The whole-resource hash (hash.go) stays unkeyed: it must equal
// stakater's, which is what a migration from it compares.

// KeySize is the size of a fingerprint key: 256 random bits.
const KeySize = 32

// KeyDigester makes the per-key digests of resources. The zero value is
// unkeyed (Sum is the SHA-256 prefix, as before keyed digests): the
// controller uses it only when it has no key (per-key mode off and no key
// Secret). It never prints its key.
type KeyDigester struct{ key []byte }

// Keyed is the KeyDigester under key, which must be at least KeySize bytes.
func Keyed(key []byte) (KeyDigester, error) {
	if len(key) < KeySize {
		return KeyDigester{}, fmt.Errorf("a fingerprint key of %d bytes: want at least %d", len(key), KeySize)
	}
	return KeyDigester{key: bytes.Clone(key)}, nil
}

// Keyed reports whether d digests under a key.
func (d KeyDigester) Keyed() bool { return d.key != nil }

// String says whether d is keyed, never the key: d sits in options that
// may be printed.
func (d KeyDigester) String() string {
	if d.Keyed() {
		return "keyed"
	}
	return "unkeyed"
}

// GoString keeps %#v from printing the key.
func (d KeyDigester) GoString() string { return "hash.KeyDigester(" + d.String() + ")" }

// ConfigMapKeys digests every key of data and binaryData. A key moving
// between the two with the same bytes is the same content to a pod.
func (d KeyDigester) ConfigMapKeys(data map[string]string, binaryData map[string][]byte) Keys {
	if len(data)+len(binaryData) == 0 {
		return nil
	}
	out := make(Keys, 0, len(data)+len(binaryData))
	g := d.newDigester()
	for k, v := range data {
		out = append(out, g.string(k, v))
	}
	for k, v := range binaryData {
		out = append(out, g.bytes(k, v))
	}
	return sortKeys(out)
}

// SecretKeys digests every key of a Secret's data.
func (d KeyDigester) SecretKeys(data map[string][]byte) Keys {
	if len(data) == 0 {
		return nil
	}
	out := make(Keys, 0, len(data))
	g := d.newDigester()
	for k, v := range data {
		out = append(out, g.bytes(k, v))
	}
	return sortKeys(out)
}

// digester digests values with one SHA-256 state and one HMAC state (nil
// when unkeyed), each reset per value. Keys are cloned on the way in so the
// cache never pins a decoded object's buffers through a key's bytes.
type digester struct {
	w   *stringWriter
	mac stdhash.Hash
	sum [sha256.Size]byte
	tag [sha256.Size]byte
}

func (d KeyDigester) newDigester() *digester {
	g := &digester{w: newStringWriter(sha256.New())}
	if d.key != nil {
		g.mac = hmac.New(sha256.New, d.key)
	}
	return g
}

func (g *digester) bytes(key string, v []byte) KeyDigest {
	g.w.h.Reset()
	_, _ = g.w.h.Write(v)
	return g.finish(key)
}

func (g *digester) string(key, v string) KeyDigest {
	g.w.h.Reset()
	g.w.string(v)
	return g.finish(key)
}

func (g *digester) finish(key string) KeyDigest {
	s := g.w.h.Sum(g.sum[:0])
	kd := KeyDigest{Key: strings.Clone(key), Unkeyed: binary.BigEndian.Uint64(s[:8])}
	kd.Sum = kd.Unkeyed
	if g.mac != nil {
		g.mac.Reset()
		_, _ = g.mac.Write(s)
		kd.Sum = binary.BigEndian.Uint64(g.mac.Sum(g.tag[:0])[:8])
	}
	return kd
}

// Package hash computes the fingerprints of ConfigMap and Secret contents.
//
// The algorithm is stakater/Reloader's, bit for bit (SHA-1 hex over the
// sorted "key=value" pairs joined by ";", binaryData base64-encoded), so a
// cluster migrating from it sees equal hashes in the STAKATER_* variables it
// left behind and restarts nothing. In FIPS 140-only mode, where SHA-1 is
// refused, the same input is digested with SHA-256 (algorithm.go).
package hash

import (
	"encoding/base64"
	"encoding/hex"
	stdhash "hash"
	"sort"

	corev1 "k8s.io/api/core/v1"
)

// ConfigMap fingerprints data and binaryData.
func (a Algorithm) ConfigMap(data map[string]string, binaryData map[string][]byte) string {
	pairs := make([]pair, 0, len(data)+len(binaryData))
	for k, v := range data {
		pairs = append(pairs, pair{k: k, v: v})
	}
	for k, v := range binaryData {
		pairs = append(pairs, pair{k: k, v: base64.StdEncoding.EncodeToString(v)})
	}
	return a.sum(pairs)
}

// Secret fingerprints a Secret's data (stringData is folded into data by the
// apiserver, so it is covered).
func (a Algorithm) Secret(data map[string][]byte) string {
	pairs := make([]pair, 0, len(data))
	for k, v := range data {
		pairs = append(pairs, pair{k: k, b: v})
	}
	return a.sum(pairs)
}

// Of fingerprints a ConfigMap or Secret.
func (a Algorithm) Of(obj any) (string, bool) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return a.ConfigMap(o.Data, o.BinaryData), true
	case *corev1.Secret:
		return a.Secret(o.Data), true
	}
	return "", false
}

// SecretProviderClassPodStatus fingerprints what a Secrets Store CSI mount
// holds, as the original does: every object's "id=version" and the class
// name.
func (a Algorithm) SecretProviderClassPodStatus(className string, objects map[string]string) string {
	pairs := make([]pair, 0, len(objects)+1)
	for id, version := range objects {
		pairs = append(pairs, pair{k: id, v: version})
	}
	pairs = append(pairs, pair{k: "SecretProviderClassName", v: className})
	return a.sum(pairs)
}

// Empty is the fingerprint of a resource with no data: what the original
// records when a resource is deleted under the annotations strategy.
func (a Algorithm) Empty() string { return a.sum(nil) }

// pair is one "key=value" of the original's hash input, kept apart so the
// input is streamed into the digest instead of being joined into one large copy.
// The value is v, or b for a Secret's bytes, which are digested where they
// lie: every Secret of a cluster passes through here once at start-up (500
// KiB ones included), and a copy per value would double the garbage of the
// initial lists, which is what sets the controller's peak memory.
type pair struct {
	k, v string
	b    []byte
}

func (p pair) valueLen() int { return len(p.v) + len(p.b) }

func (p pair) valueAt(i int) byte {
	if len(p.b) > 0 {
		return p.b[i]
	}
	return p.v[i]
}

// less orders pairs as the original's sort of the joined "k=v" strings.
func less(a, b pair) bool {
	return compareJoined(a, b) < 0
}

// compareJoined compares a.k+"="+a.v with b.k+"="+b.v without building them.
func compareJoined(a, b pair) int {
	at := func(p pair, i int) (byte, bool) {
		switch {
		case i < len(p.k):
			return p.k[i], true
		case i == len(p.k):
			return '=', true
		case i-len(p.k)-1 < p.valueLen():
			return p.valueAt(i - len(p.k) - 1), true
		}
		return 0, false
	}
	for i := 0; ; i++ {
		x, okA := at(a, i)
		y, okB := at(b, i)
		switch {
		case !okA && !okB:
			return 0
		case !okA:
			return -1
		case !okB:
			return 1
		case x != y:
			if x < y {
				return -1
			}
			return 1
		}
	}
}

func (a Algorithm) sum(pairs []pair) string {
	sort.Slice(pairs, func(i, j int) bool { return less(pairs[i], pairs[j]) })
	w := newStringWriter(a.new())
	for i, p := range pairs {
		if i > 0 {
			w.string(";")
		}
		w.string(p.k)
		w.string("=")
		w.string(p.v)
		_, _ = w.h.Write(p.b)
	}
	return hex.EncodeToString(w.h.Sum(nil))
}

// stringWriter writes strings to a digest through one small buffer:
// io.WriteString would copy each whole string, because neither SHA-1 nor
// SHA-256 here implements io.StringWriter, and a ConfigMap value can be 1 MiB.
type stringWriter struct {
	h   stdhash.Hash
	buf [512]byte
}

func newStringWriter(h stdhash.Hash) *stringWriter { return &stringWriter{h: h} }

func (w *stringWriter) string(s string) {
	for len(s) > 0 {
		n := copy(w.buf[:], s)
		_, _ = w.h.Write(w.buf[:n])
		s = s[n:]
	}
}

package hash

import (
	"fmt"
	"strings"
	"testing"
)

func TestSubsetChangesOnlyWithTheKeysItNames(t *testing.T) {
	before := testKeys.ConfigMapKeys(map[string]string{"LOG_LEVEL": "info", "URL": "http://a", "OTHER": "x"}, nil)
	otherChanged := testKeys.ConfigMapKeys(map[string]string{"LOG_LEVEL": "info", "URL": "http://a", "OTHER": "y"}, nil)
	usedChanged := testKeys.ConfigMapKeys(map[string]string{"LOG_LEVEL": "debug", "URL": "http://a", "OTHER": "x"}, nil)
	used := []string{"LOG_LEVEL", "URL"}
	if before.Subset(SHA1, used) != otherChanged.Subset(SHA1, used) {
		t.Error("a change to an unused key changed the subset hash")
	}
	if before.Subset(SHA1, used) == usedChanged.Subset(SHA1, used) {
		t.Error("a change to a used key left the subset hash alone")
	}
}

func TestSubsetCountsAKeyAppearingDisappearingOrRenamed(t *testing.T) {
	used := []string{"a"}
	with := testKeys.SecretKeys(map[string][]byte{"a": []byte("1"), "b": []byte("2")})
	without := testKeys.SecretKeys(map[string][]byte{"b": []byte("2")})
	renamed := testKeys.SecretKeys(map[string][]byte{"A": []byte("1"), "b": []byte("2")})
	if with.Subset(SHA1, used) == without.Subset(SHA1, used) {
		t.Error("a used key's disappearance is not a change")
	}
	if with.Subset(SHA1, used) == renamed.Subset(SHA1, used) {
		t.Error("renaming a used key is not a change")
	}
	if without.Subset(SHA1, used) != renamed.Subset(SHA1, used) {
		t.Error("two resources without the used key differ in the subset hash")
	}
}

func TestSubsetNeverEqualsTheWholeHash(t *testing.T) {
	data := map[string]string{"a": "1"}
	if got, whole := testKeys.ConfigMapKeys(data, nil).Subset(SHA1, []string{"a"}), SHA1.ConfigMap(data, nil); got == whole {
		t.Errorf("subset of every key = whole hash %s; the two formulas must not be confused", got)
	}
}

func TestBinaryDataAndDataDigestTheSameBytesAlike(t *testing.T) {
	a := testKeys.ConfigMapKeys(map[string]string{"k": "v"}, nil)
	b := testKeys.ConfigMapKeys(nil, map[string][]byte{"k": []byte("v")})
	if a.Subset(SHA1, []string{"k"}) != b.Subset(SHA1, []string{"k"}) {
		t.Error("the same bytes in data and binaryData digest differently")
	}
}

func TestKeysAreSortedAndHasFindsThem(t *testing.T) {
	k := testKeys.ConfigMapKeys(map[string]string{"z": "", "a": ""}, map[string][]byte{"m": nil})
	if len(k) != 3 || k[0].Key != "a" || k[1].Key != "m" || k[2].Key != "z" {
		t.Fatalf("keys = %v, want a, m, z", k)
	}
	if !k.Has("m") || k.Has("b") {
		t.Error("Has is wrong")
	}
	if testKeys.ConfigMapKeys(nil, nil) != nil || testKeys.SecretKeys(nil) != nil {
		t.Error("an empty resource keeps a slice")
	}
}

// The per-key path runs beside the whole hash in the informer transform;
// compare the two on a typical 10-key, 1 KiB ConfigMap and a 50 KiB Secret.
func BenchmarkWholeConfigMap(b *testing.B) {
	data := benchData(10, 100)
	b.ReportAllocs()
	for b.Loop() {
		SHA1.ConfigMap(data, nil)
	}
}

// Keyed and unkeyed: the HMAC's cost is per key, not per byte.
func BenchmarkKeysConfigMap(b *testing.B) {
	data := benchData(10, 100)
	for name, d := range map[string]KeyDigester{"keyed": testKeys, "unkeyed": {}} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d.ConfigMapKeys(data, nil)
			}
		})
	}
}

func BenchmarkWholeSecret50KiB(b *testing.B) {
	data := benchSecret(5, 10<<10)
	b.ReportAllocs()
	for b.Loop() {
		SHA1.Secret(data)
	}
}

func BenchmarkKeysSecret50KiB(b *testing.B) {
	data := benchSecret(5, 10<<10)
	for name, d := range map[string]KeyDigester{"keyed": testKeys, "unkeyed": {}} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d.SecretKeys(data)
			}
		})
	}
}

func BenchmarkSubset(b *testing.B) {
	k := testKeys.ConfigMapKeys(benchData(10, 100), nil)
	used := []string{"key-3", "key-7"}
	b.ReportAllocs()
	for b.Loop() {
		k.Subset(SHA1, used)
	}
}

func benchData(n, size int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m[fmt.Sprintf("key-%d", i)] = strings.Repeat("v", size)
	}
	return m
}

func benchSecret(n, size int) map[string][]byte {
	m := make(map[string][]byte, n)
	for i := range n {
		m[fmt.Sprintf("key-%d", i)] = []byte(strings.Repeat("s", size))
	}
	return m
}

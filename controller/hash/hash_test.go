package hash

import (
	"crypto/sha1" //nolint:gosec
	"encoding/hex"
	"sort"
	"strings"
	"testing"
)

func sha1hex(s string) string {
	h := sha1.Sum([]byte(s)) //nolint:gosec
	return hex.EncodeToString(h[:])
}

// The fingerprint must equal stakater/Reloader's so migrated workloads whose
// STAKATER_* variables it wrote are recognised as up to date.
func TestConfigMapHashMatchesTheOriginal(t *testing.T) {
	got := ConfigMap(map[string]string{"b": "2", "a": "1"}, map[string][]byte{"bin": {0xff, 0x00}})
	want := sha1hex("a=1;b=2;bin=/wA=")
	if got != want {
		t.Fatalf("ConfigMap hash = %s, want %s", got, want)
	}
}

func TestSecretHashMatchesTheOriginal(t *testing.T) {
	got := Secret(map[string][]byte{"password": []byte("s3cr3t"), "user": []byte("admin")})
	want := sha1hex("password=s3cr3t;user=admin")
	if got != want {
		t.Fatalf("Secret hash = %s, want %s", got, want)
	}
}

func TestEmptyResourcesShareTheEmptyHash(t *testing.T) {
	if ConfigMap(nil, nil) != Empty() || Secret(map[string][]byte{}) != Empty() {
		t.Fatal("empty ConfigMap/Secret must hash to Empty()")
	}
	if Empty() != sha1hex("") {
		t.Fatalf("Empty() = %s, want sha1 of the empty string", Empty())
	}
}

func TestHashIgnoresMapOrderButNotContent(t *testing.T) {
	a := ConfigMap(map[string]string{"x": "1", "y": "2"}, nil)
	b := ConfigMap(map[string]string{"y": "2", "x": "1"}, nil)
	c := ConfigMap(map[string]string{"x": "1", "y": "3"}, nil)
	if a != b || a == c {
		t.Fatalf("order must not matter and content must: %s %s %s", a, b, c)
	}
}

// The streamed hash orders pairs exactly as sorting the joined "k=v" strings
// does, including keys that are prefixes of others ('.' sorts before '=').
func TestOrderMatchesSortingJoinedPairs(t *testing.T) {
	data := map[string]string{"a": "1", "a.b": "2", "a=": "3", "": "x", "b": ""}
	got := ConfigMap(data, nil)
	want := sha1hex("=x;a.b=2;a=1;a==3;b=")
	if got != want {
		t.Fatalf("hash %s, want %s", got, want)
	}
}

func FuzzHashEqualsJoinedSort(f *testing.F) {
	f.Add("a", "1", "a.b", "2", "a=", "3")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		m := map[string]string{k1: v1, k2: v2, k3: v3}
		var joined []string
		for k, v := range m {
			joined = append(joined, k+"="+v)
		}
		sort.Strings(joined)
		if got, want := ConfigMap(m, nil), sha1hex(strings.Join(joined, ";")); got != want {
			t.Fatalf("hash of %v = %s, want %s", m, got, want)
		}
	})
}

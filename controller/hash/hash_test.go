package hash

import (
	"crypto/sha1" //nolint:gosec
	"crypto/sha256"
	"encoding/hex"
	"runtime"
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
	got := SHA1.ConfigMap(map[string]string{"b": "2", "a": "1"}, map[string][]byte{"bin": {0xff, 0x00}})
	want := sha1hex("a=1;b=2;bin=/wA=")
	if got != want {
		t.Fatalf("ConfigMap hash = %s, want %s", got, want)
	}
}

func TestSecretHashMatchesTheOriginal(t *testing.T) {
	got := SHA1.Secret(map[string][]byte{"password": []byte("s3cr3t"), "user": []byte("admin")})
	want := sha1hex("password=s3cr3t;user=admin")
	if got != want {
		t.Fatalf("Secret hash = %s, want %s", got, want)
	}
}

func TestEmptyResourcesShareTheEmptyHash(t *testing.T) {
	if SHA1.ConfigMap(nil, nil) != SHA1.Empty() || SHA1.Secret(map[string][]byte{}) != SHA1.Empty() {
		t.Fatal("empty ConfigMap/Secret must hash to SHA1.Empty()")
	}
	if SHA1.Empty() != sha1hex("") {
		t.Fatalf("SHA1.Empty() = %s, want sha1 of the empty string", SHA1.Empty())
	}
}

func TestHashIgnoresMapOrderButNotContent(t *testing.T) {
	a := SHA1.ConfigMap(map[string]string{"x": "1", "y": "2"}, nil)
	b := SHA1.ConfigMap(map[string]string{"y": "2", "x": "1"}, nil)
	c := SHA1.ConfigMap(map[string]string{"x": "1", "y": "3"}, nil)
	if a != b || a == c {
		t.Fatalf("order must not matter and content must: %s %s %s", a, b, c)
	}
}

// The streamed hash orders pairs exactly as sorting the joined "k=v" strings
// does, including keys that are prefixes of others ('.' sorts before '=').
func TestOrderMatchesSortingJoinedPairs(t *testing.T) {
	data := map[string]string{"a": "1", "a.b": "2", "a=": "3", "": "x", "b": ""}
	got := SHA1.ConfigMap(data, nil)
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
		want := sha1hex(strings.Join(joined, ";"))
		if got := SHA1.ConfigMap(m, nil); got != want {
			t.Fatalf("hash of %v = %s, want %s", m, got, want)
		}
		// A Secret's values are digested as bytes, in place: the same input.
		b := map[string][]byte{}
		for k, v := range m {
			b[k] = []byte(v)
		}
		if got := SHA1.Secret(b); got != want {
			t.Fatalf("hash of Secret data %v = %s, want %s", m, got, want)
		}
	})
}

// Every Secret and ConfigMap passes through the hash once at start-up, 500
// KiB ones included: digesting must not copy a value, or the garbage of the
// initial lists (and so the controller's peak memory) doubles.
func TestHashingDoesNotCopyValues(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	secret := map[string][]byte{"tls.key": []byte(big), "ca.crt": []byte("short")}
	cm := map[string]string{"config.yaml": big}
	for name, f := range map[string]func(){
		"Secret":        func() { SHA1.Secret(secret) },
		"ConfigMap":     func() { SHA256.ConfigMap(cm, nil) },
		"SecretKeys":    func() { testKeys.SecretKeys(secret) },
		"ConfigMapKeys": func() { testKeys.ConfigMapKeys(cm, nil) },
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 8 {
			f()
		}
		runtime.ReadMemStats(&after)
		if per := (after.TotalAlloc - before.TotalAlloc) / 8; per > 16<<10 {
			t.Errorf("%s of a 1 MiB value allocates %d bytes: a value is being copied", name, per)
		}
	}
}

// SHA-256 digests the same input as stakater's SHA-1 (for FIPS 140-only
// mode); the algorithm is chosen by name and a wrong name is an error.
func TestSHA256DigestsTheSameInput(t *testing.T) {
	data := map[string]string{"b": "2", "a": "1"}
	sum := sha256.Sum256([]byte("a=1;b=2"))
	if got, want := SHA256.ConfigMap(data, nil), hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("SHA256.ConfigMap = %s, want %s", got, want)
	}
	if SHA256.ConfigMap(data, nil) == SHA1.ConfigMap(data, nil) {
		t.Fatal("the two algorithms must give different fingerprints")
	}
	for _, name := range []string{"sha1", "sha256"} {
		if a, err := ParseAlgorithm(name); err != nil || string(a) != name {
			t.Errorf("ParseAlgorithm(%q) = %q, %v", name, a, err)
		}
	}
	if a, err := ParseAlgorithm(""); err != nil || a != SHA1 {
		t.Errorf("ParseAlgorithm(\"\") outside FIPS 140-only mode = %q, %v; want stakater's sha1", a, err)
	}
	if _, err := ParseAlgorithm("md5"); err == nil || !strings.Contains(err.Error(), `"md5"`) {
		t.Errorf("ParseAlgorithm(md5) = %v, want an error naming it", err)
	}
}

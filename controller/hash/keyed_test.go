package hash

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// testKeys digests under a fixed key, as the controller does under its own.
var testKeys = mustKeyed(bytes.Repeat([]byte{0x5a}, KeySize))

func mustKeyed(key []byte) KeyDigester {
	d, err := Keyed(key)
	if err != nil {
		panic(err)
	}
	return d
}

func randomKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// unkeyedRecord is the per-key hash of releases before keyed digests,
// written out: SHA-1 over "keys:<key>=<hex of SHA-256(value)[:8]>;".
func unkeyedRecord(key, value string) string {
	s := sha256.Sum256([]byte(value))
	return sha1hex("keys:" + key + "=" + hex.EncodeToString(s[:8]) + ";")
}

// A digest is HMAC-SHA-256 under the key of the value's SHA-256, first 8
// bytes; the unkeyed digest beside it is the SHA-256's first 8 bytes.
func TestKeyedDigestIsHMACSHA256OfTheValuesSHA256(t *testing.T) {
	key := randomKey(t)
	d := mustKeyed(key)
	got := d.SecretKeys(map[string][]byte{"pin": []byte("4711")})
	sum := sha256.Sum256([]byte("4711"))
	mac := hmac.New(sha256.New, key)
	mac.Write(sum[:])
	want := KeyDigest{Key: "pin", Sum: binary.BigEndian.Uint64(mac.Sum(nil)[:8]), Unkeyed: binary.BigEndian.Uint64(sum[:8])}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("digests = %+v, want %+v", got, want)
	}
	if cm := d.ConfigMapKeys(map[string]string{"pin": "4711"}, nil); cm[0] != want {
		t.Errorf("a ConfigMap's value digests as %+v, a Secret's as %+v", cm[0], want)
	}
}

// The same key gives the same digests (replicas and restarts agree); two
// keys give different ones (two installations' records cannot be compared).
func TestKeyedDigestsDependOnTheKey(t *testing.T) {
	data := map[string][]byte{"pin": []byte("4711")}
	key := randomKey(t)
	a, again, other := mustKeyed(key), mustKeyed(bytes.Clone(key)), mustKeyed(randomKey(t))
	used := []string{"pin"}
	if a.SecretKeys(data).Subset(SHA1, used) != again.SecretKeys(data).Subset(SHA1, used) {
		t.Error("the same key gave two different records")
	}
	if a.SecretKeys(data).Subset(SHA1, used) == other.SecretKeys(data).Subset(SHA1, used) {
		t.Error("two keys gave the same record: the digest does not depend on the key")
	}
	if a.SecretKeys(data).Subset(SHA256, used) == other.SecretKeys(data).Subset(SHA256, used) {
		t.Error("two keys gave the same SHA-256 record")
	}
}

// The attack of the security review: a 4-digit PIN's per-key record, read
// from a workload, is matched by trying every PIN under the unkeyed
// formula. Under a key the attacker lacks, no candidate matches, under the
// unkeyed formula or any other key; with the key, exactly one does (the
// search itself works).
func TestAPINsRecordCannotBeMatchedWithoutTheKey(t *testing.T) {
	key := randomKey(t)
	record := mustKeyed(key).SecretKeys(map[string][]byte{"pin": []byte("4711")}).Subset(SHA1, []string{"pin"})
	guess := mustKeyed(randomKey(t))
	var withKey []string
	for i := range 10000 {
		pin := fmt.Sprintf("%04d", i)
		if unkeyedRecord("pin", pin) == record {
			t.Fatalf("the unkeyed formula matches the record for %s", pin)
		}
		if guess.SecretKeys(map[string][]byte{"pin": []byte(pin)}).Subset(SHA1, []string{"pin"}) == record {
			t.Fatalf("a wrong key matches the record for %s", pin)
		}
		if mustKeyed(key).SecretKeys(map[string][]byte{"pin": []byte(pin)}).Subset(SHA1, []string{"pin"}) == record {
			withKey = append(withKey, pin)
		}
	}
	if len(withKey) != 1 || withKey[0] != "4711" {
		t.Errorf("with the key, the search finds %v; want exactly 4711", withKey)
	}
}

// UnkeyedSubset is what releases before keyed digests recorded, bit for
// bit, so their records can be adopted; the zero KeyDigester makes it.
func TestUnkeyedSubsetIsTheFormulaOfEarlierReleases(t *testing.T) {
	data := map[string][]byte{"pin": []byte("4711"), "other": []byte("x")}
	want := unkeyedRecord("pin", "4711")
	if got := testKeys.SecretKeys(data).UnkeyedSubset(SHA1, []string{"pin"}); got != want {
		t.Errorf("UnkeyedSubset = %s, want %s", got, want)
	}
	if got := (KeyDigester{}).SecretKeys(data).Subset(SHA1, []string{"pin"}); got != want {
		t.Errorf("the unkeyed digester's Subset = %s, want %s", got, want)
	}
	if got := testKeys.SecretKeys(data).Subset(SHA1, []string{"pin"}); got == want {
		t.Error("the keyed Subset equals the unkeyed formula")
	}
}

// A short key is refused, and a digester never prints its key, whatever the
// verb, so options holding one can be logged.
func TestKeyedRefusesShortKeysAndNeverPrintsTheKey(t *testing.T) {
	if _, err := Keyed(make([]byte, KeySize-1)); err == nil {
		t.Error("a 31-byte key was accepted")
	}
	key := randomKey(t)
	d := mustKeyed(key)
	out := fmt.Sprintf("%v %+v %#v %s %x %X %q", d, d, d, d, d, d, d) + fmt.Sprint(struct{ D KeyDigester }{d})
	for _, form := range []string{string(key), hex.EncodeToString(key), strings.ToUpper(hex.EncodeToString(key)),
		base64.StdEncoding.EncodeToString(key), fmt.Sprint(key)} {
		if strings.Contains(out, form) {
			t.Fatalf("printing a KeyDigester shows its key: %s", out)
		}
	}
	if !d.Keyed() || (KeyDigester{}).Keyed() {
		t.Error("Keyed is wrong")
	}
}

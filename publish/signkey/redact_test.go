package signkey

import (
	"strings"
	"testing"
)

// A PKCS#11 URI may carry the token's PIN, and cosign reads it in more
// spellings than one (attribute names are percent-decoded, ';' and '&' both
// separate): whatever the spelling, the PIN never survives Redact, and the
// rest of the URI does, so an error still says which key.
func TestRedactHidesThePINInEverySpelling(t *testing.T) {
	const pin = "s3cr3t"
	cases := []struct {
		uri     string
		inArgv  bool // PINInURI: the PIN itself is on the command line
		another string
	}{
		{"pkcs11:token=release;object=reloader?module-path=/lib/p11.so&pin-value=" + pin, true, "module-path=/lib/p11.so"},
		{"pkcs11:token=release;object=reloader?pin%2Dvalue=" + pin + "&module-path=/lib/p11.so", true, "object=reloader"},
		{"pkcs11:token=release;object=reloader?pin%2dvalue=" + pin, true, "token=release"},
		{"pkcs11:token=release;object=reloader?PIN-VALUE=" + pin, true, "token=release"},
		{"pkcs11:token=release;object=reloader?module-path=/lib/p11.so;pin-value=" + pin, true, "module-path"},
		{"pkcs11:token=release;pin-value=" + pin + ";object=reloader", true, "object=reloader"},
		{"pkcs11:token=release;object=reloader?pin-source=/run/secrets/" + pin, false, "token=release"},
		{"pkcs11:token=release;object=reloader?pin%2Dsource=file:/run/" + pin, false, "token=release"},
		{"pkcs11:token=release;object=reloader?p%zzin-value=" + pin, true, "token=release"},
		{"pkcs11:token=release;object=reloader?pin-value=" + pin + "%20", true, "token=release"},
	}
	for _, tc := range cases {
		got := Redact(tc.uri)
		if strings.Contains(got, pin) {
			t.Errorf("Redact(%q) = %q: the PIN survived", tc.uri, got)
		}
		if !strings.Contains(got, tc.another) || !strings.HasPrefix(got, "pkcs11:") {
			t.Errorf("Redact(%q) = %q: want the rest of the URI kept (%q)", tc.uri, got, tc.another)
		}
		if PINInURI(tc.uri) != tc.inArgv {
			t.Errorf("PINInURI(%q) = %v, want %v", tc.uri, !tc.inArgv, tc.inArgv)
		}
	}
	if u := "pkcs11:token=release;object=reloader?module-path=/lib/p11.so"; Redact(u) != u || PINInURI(u) {
		t.Errorf("a URI without a PIN must be kept as it is: %q", Redact(u))
	}
}

func FuzzRedactNeverKeepsAPINValue(f *testing.F) {
	f.Add("pkcs11:token=a;object=b?pin-value=", "1234")
	f.Add("pkcs11:token=a?pin%2Dvalue=", "zz99")
	f.Fuzz(func(t *testing.T, prefix, pin string) {
		// An attribute named pin-value, however the rest looks.
		head, ok := strings.CutSuffix(prefix, "pin-value=")
		if !ok || !strings.HasPrefix(head, "pkcs11:") || head != "pkcs11:" && !strings.ContainsAny(head[len(head)-1:], ";&?") ||
			len(pin) < 4 || strings.ContainsAny(pin, ";&?") || strings.Contains(head, pin) {
			return
		}
		if got := Redact(prefix + pin); strings.Contains(got, pin) {
			t.Fatalf("Redact(%q) = %q keeps the PIN", prefix+pin, got)
		}
	})
}

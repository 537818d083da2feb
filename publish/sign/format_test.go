package sign_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/test/virtualsigstore"
)

// --signature-format takes bundle, legacy and both, whatever their case,
// and names the accepted values when it refuses another.
func TestSignatureFormatParsesItsThreeValues(t *testing.T) {
	for in, want := range map[string]sign.Format{"bundle": sign.FormatBundle, "legacy": sign.FormatLegacy, "both": sign.FormatBoth, "Both": sign.FormatBoth} {
		got, err := sign.ParseFormat(in)
		if err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "sig", "bundles", "both,legacy"} {
		if _, err := sign.ParseFormat(in); err == nil || !strings.Contains(err.Error(), "bundle, legacy, both") {
			t.Errorf("ParseFormat(%q) = %v, want a refusal naming the values", in, err)
		}
	}
}

// Each format publishes the forms its name says; the zero one is the
// signer's own.
func TestSignatureFormatsPublishWhatTheirNameSays(t *testing.T) {
	key := keySigner(t)
	keyless := keylessSigner(t)
	for _, c := range []struct {
		in           sign.Format
		signer       *sign.Signer
		bundles, tag bool
	}{
		{sign.FormatBundle, key, true, false},
		{sign.FormatLegacy, key, false, true},
		{sign.FormatBoth, key, true, true},
		{"", key, false, true},
		{sign.FormatBundle, keyless, true, false},
		// A certificate's tag signature could not be verified later: both
		// is the bundles alone.
		{sign.FormatBoth, keyless, true, false},
		{"", keyless, true, false},
	} {
		f, err := c.in.For(c.signer)
		if err != nil {
			t.Fatalf("%q for keyless=%v: %v", c.in, c.signer.Keyless(), err)
		}
		if f.Bundles() != c.bundles || f.Tags() != c.tag {
			t.Errorf("%q for keyless=%v is %q: bundles %v, tags %v; want %v, %v", c.in, c.signer.Keyless(), f, f.Bundles(), f.Tags(), c.bundles, c.tag)
		}
	}
}

// A keyless release asked for tags alone is refused rather than given
// bundles it did not ask for.
func TestLegacyFormatIsRefusedForAKeylessSigner(t *testing.T) {
	_, err := sign.FormatLegacy.For(keylessSigner(t))
	if err == nil || !strings.Contains(err.Error(), "keyless") {
		t.Fatalf("legacy for a keyless signer: %v, want a refusal naming keyless signing", err)
	}
	if errors.Unwrap(err) == nil {
		t.Errorf("the refusal %v wraps no cause", err)
	}
}

func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"bundle", "legacy", "both", "BOTH", "", "bundle\x00", "both,legacy"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := sign.ParseFormat(s)
		if err != nil {
			return
		}
		if !strings.EqualFold(string(got), s) || (!got.Bundles() && !got.Tags()) {
			t.Fatalf("ParseFormat(%q) = %q, which publishes nothing or is not what was asked", s, got)
		}
	})
}

func keySigner(t *testing.T) *sign.Signer {
	t.Helper()
	priv, _, err := sign.GenerateKey(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sign.FromKey(sign.KeyOptions{PrivateKeyPath: priv})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keylessSigner(t *testing.T) *sign.Signer {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	s, err := virtualsigstore.Signer(vs, "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3", "https://token.actions.githubusercontent.com")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

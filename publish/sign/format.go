package sign

import (
	"fmt"
	"strings"
)

// Format is the form a key-signed release's signatures and attestations
// take in the registry.
type Format string

const (
	// FormatBoth publishes each signature and attestation twice: as a
	// Sigstore bundle (v0.3) attached as an OCI referrer, which cosign v3
	// verifies by default and cosign v4 will by default only, and as the
	// cosign .sig/.att tags CRI-O reads (it reads nothing else yet).
	FormatBoth Format = "both"
	// FormatBundle publishes only Sigstore bundle referrers: no tags.
	FormatBundle Format = "bundle"
	// FormatLegacy publishes only the cosign .sig/.att tags.
	FormatLegacy Format = "legacy"
)

// Formats are the accepted values, in the order a flag's help lists them.
var Formats = []Format{FormatBundle, FormatLegacy, FormatBoth}

// ParseFormat reads a --signature-format value.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if strings.EqualFold(s, string(f)) {
			return f, nil
		}
	}
	return "", fmt.Errorf("signature format %q: want one of bundle, legacy, both", s)
}

// Bundles reports whether the format publishes Sigstore bundle referrers.
func (f Format) Bundles() bool { return f == FormatBundle || f == FormatBoth }

// Tags reports whether the format publishes cosign .sig/.att tags.
func (f Format) Tags() bool { return f == FormatLegacy || f == FormatBoth }

// For is the format s publishes under f. The zero Format is the signer's
// own: tags for a key, bundles for a certificate. A keyless signer writes
// bundles only: a tag signature from a ten-minute certificate carries no
// time it could be verified at later (see errKeyless), so FormatBoth means
// the bundles, and FormatLegacy is refused rather than silently changed.
func (f Format) For(s *Signer) (Format, error) {
	if !s.Keyless() {
		if f == "" {
			return FormatLegacy, nil
		}
		return f, nil
	}
	if f == FormatLegacy {
		return "", fmt.Errorf("signature format %s: %w", f, errKeyless)
	}
	return FormatBundle, nil
}

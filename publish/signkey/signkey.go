// Package signkey opens the signing key a --key flag names: a cosign key
// file (encrypted PEM), a PKCS#11 URI (RFC 7512, "pkcs11:...", as cosign
// takes it) whose key never leaves its token, or a KMS URI
// ("hashivault://..."). Every kind comes back as a sigstore SignerVerifier,
// the one interface publish/sign signs through, so a release signed in a
// token is the same release, byte for byte in its formats, as one signed
// with a file.
//
// PKCS#11 needs cgo (the module is dlopened), so it is linked only into a
// build with the pkcs11key tag and CGO_ENABLED=1, as cosign does; the
// default build is static and refuses a pkcs11: key at once, saying how to
// build one that takes it.
package signkey

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/sigstore/cosign/v2/pkg/cosign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/reloader-dev/reloader/internal/exitcode"
)

// ErrNotLinked: the key names a kind this build of the command cannot open
// (PKCS#11 without the pkcs11key tag, a KMS provider not linked in). It is
// a usage error: the key is fine, the binary is the wrong one.
var ErrNotLinked = exitcode.New(exitcode.Usage, "not supported by this build")

// ErrKey: the key cannot be opened (a missing file, a wrong password, a
// token or object that is not there, a malformed URI).
var ErrKey = exitcode.New(exitcode.Usage, "signing key")

// Kind is what holds the private key.
type Kind string

// The kinds of key a reference can name.
const (
	File   Kind = "file"
	PKCS11 Kind = "pkcs11"
	KMS    Kind = "kms"
)

// Options says which key to open.
type Options struct {
	// Ref is a key file path, a pkcs11: URI or a KMS URI.
	Ref string
	// Password decrypts a key file (COSIGN_PASSWORD); tokens and KMS
	// ignore it. A token's PIN comes from COSIGN_PKCS11_PIN or the URI's
	// pin-value, as in cosign.
	Password []byte
}

// Key is an opened signing key. Close releases the token session or KMS
// client; a file key holds nothing.
type Key struct {
	SignerVerifier signature.SignerVerifier
	// PublicKeyPEM is the key's public half: what the lock names as the
	// signer and what verifiers are given.
	PublicKeyPEM []byte
	Kind         Kind
	// Name is the reference with any PIN or token removed, safe to log.
	Name  string
	close func()
}

// Close releases what the key holds open. It is safe to call twice.
func (k *Key) Close() {
	if k != nil && k.close != nil {
		k.close()
		k.close = nil
	}
}

// KindOf says which kind of key ref names, by its scheme; anything without
// a known scheme is a file path, as cosign reads --key.
func KindOf(ref string) Kind {
	switch {
	case strings.HasPrefix(ref, "pkcs11:"):
		return PKCS11
	case kmsScheme(ref) != "":
		return KMS
	}
	return File
}

// Open opens the key ref names.
func Open(ctx context.Context, opts Options) (*Key, error) {
	if opts.Ref == "" {
		return nil, fmt.Errorf("%w: no key given", ErrKey)
	}
	var (
		sv    signature.SignerVerifier
		close func()
		err   error
	)
	kind := KindOf(opts.Ref)
	name := Redact(opts.Ref)
	switch kind {
	case PKCS11:
		sv, close, err = openPKCS11(opts.Ref)
	case KMS:
		sv, err = openKMS(ctx, opts.Ref)
	default:
		sv, err = openFile(opts.Ref, opts.Password)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the signing key %s: %w", name, err)
	}
	pub, err := publicKeyPEM(sv)
	if err != nil {
		if close != nil {
			close()
		}
		return nil, fmt.Errorf("reading the public key of %s: %w", name, err)
	}
	return &Key{SignerVerifier: sv, PublicKeyPEM: pub, Kind: kind, Name: name, close: close}, nil
}

func openFile(path string, password []byte) (signature.SignerVerifier, error) {
	pemKey, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	sv, err := cosign.LoadPrivateKey(pemKey, password, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	return sv, nil
}

func publicKeyPEM(sv signature.SignerVerifier) ([]byte, error) {
	pub, err := sv.PublicKey()
	if err != nil {
		return nil, err
	}
	return cryptoutils.MarshalPublicKeyToPEM(pub)
}

// Redact is ref as it may be logged or put in an error: a PKCS#11 URI
// without its PIN (cosign reads pin-value, percent-decoding attribute names,
// so pin%2Dvalue is the PIN too; pin-source names where it is kept), a KMS
// URI without user information.
func Redact(ref string) string {
	switch KindOf(ref) {
	case PKCS11:
		return redactPKCS11(ref)
	case KMS:
		if u, err := url.Parse(ref); err == nil && u.User != nil {
			u.User = nil
			return u.String()
		}
	}
	return ref
}

// redactPKCS11 rewrites every attribute of the path and the query (either
// separator, as cosign accepts both) whose name is a PIN attribute in any
// spelling, keeping the rest as given.
func redactPKCS11(ref string) string {
	var b strings.Builder
	start := 0
	for i := 0; i <= len(ref); i++ {
		if i < len(ref) && !strings.ContainsRune(";&?", rune(ref[i])) {
			continue
		}
		attr := ref[start:i]
		if start == 0 {
			// "pkcs11:" starts the first path attribute.
			scheme, rest, _ := strings.Cut(attr, ":")
			b.WriteString(scheme + ":")
			attr = rest
		}
		if name, _, hasValue := strings.Cut(attr, "="); hasValue && pinAttribute(name) {
			attr = name + "=REDACTED"
		}
		b.WriteString(attr)
		if i < len(ref) {
			b.WriteByte(ref[i])
		}
		start = i + 1
	}
	return b.String()
}

// pinAttribute reports whether an attribute name (as written, perhaps
// percent-encoded) is pin-value or pin-source. A name that does not decode
// cannot be told: its value is hidden.
func pinAttribute(name string) bool {
	decoded, err := url.QueryUnescape(name)
	if err != nil {
		return true
	}
	decoded = strings.ToLower(strings.TrimSpace(decoded))
	return decoded == "pin-value" || decoded == "pin-source"
}

// PINInURI reports whether a PKCS#11 URI carries the PIN itself (pin-value
// in any spelling), which puts it in the process's argv for anyone on the
// machine to read; commands warn and point at COSIGN_PKCS11_PIN.
func PINInURI(ref string) bool {
	if KindOf(ref) != PKCS11 {
		return false
	}
	for _, attr := range strings.FieldsFunc(strings.TrimPrefix(ref, "pkcs11:"), func(r rune) bool { return r == '&' || r == ';' || r == '?' }) {
		if name, _, ok := strings.Cut(attr, "="); ok && pinAttribute(name) && !isPINSource(name) {
			return true
		}
	}
	return false
}

func isPINSource(name string) bool {
	decoded, err := url.QueryUnescape(name)
	return err == nil && strings.EqualFold(strings.TrimSpace(decoded), "pin-source")
}

//go:build pkcs11key

package signkey

import (
	"fmt"
	"os"
	"strings"

	"github.com/sigstore/cosign/v2/pkg/cosign/pkcs11key"
	"github.com/sigstore/sigstore/pkg/signature"
)

// PKCS11Linked says whether this build can sign with a PKCS#11 token.
const PKCS11Linked = true

// openPKCS11 opens the key pair the URI names through cosign's pkcs11key,
// so the URI means exactly what it means to `cosign sign --key`: the
// module from module-path or COSIGN_PKCS11_MODULE_PATH, the PIN from
// pin-value or COSIGN_PKCS11_PIN (or asked on the terminal when the token
// needs a login and neither is set).
func openPKCS11(uri string) (signature.SignerVerifier, func(), error) {
	conf := pkcs11key.NewPkcs11UriConfig()
	if err := conf.Parse(uri); err != nil {
		if strings.HasPrefix(err.Error(), "invalid uri:") {
			return nil, nil, fmt.Errorf("%w: %w", ErrKey, err)
		}
		// url's parse errors quote the URI, or the bytes around a bad
		// escape, which may be the PIN: say what is wrong without them.
		return nil, nil, fmt.Errorf("%w: not a well-formed PKCS#11 URI (RFC 7512: attributes separated by ';' in the path and '&' in the query, %%XX escapes)", ErrKey)
	}
	k, err := pkcs11key.GetKeyWithURIConfig(conf, true)
	if err != nil {
		if conf.Pin == "" && os.Getenv("COSIGN_PKCS11_PIN") == "" {
			// Without a terminal cosign's PIN prompt fails with an
			// ioctl error that does not say what is missing.
			return nil, nil, fmt.Errorf("%w: opening the token (no PIN given: set COSIGN_PKCS11_PIN): %w", ErrKey, err)
		}
		return nil, nil, fmt.Errorf("%w: opening the token: %w", ErrKey, err)
	}
	sv, err := k.SignerVerifier()
	if err != nil {
		k.Close()
		return nil, nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	return sv, k.Close, nil
}

//go:build !pkcs11key

package signkey

import (
	"fmt"

	"github.com/sigstore/sigstore/pkg/signature"
)

// PKCS11Linked says whether this build can sign with a PKCS#11 token.
const PKCS11Linked = false

// openPKCS11 refuses: the default build is static, and a PKCS#11 module
// can only be loaded by a binary built with cgo.
func openPKCS11(string) (signature.SignerVerifier, func(), error) {
	return nil, nil, fmt.Errorf("%w: a pkcs11: key needs a build with PKCS#11 support: "+
		"CGO_ENABLED=1 go build -tags pkcs11key ./cmd/release (or make reloader-release-pkcs11)", ErrNotLinked)
}

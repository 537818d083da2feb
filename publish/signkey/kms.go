package signkey

import (
	"context"
	"crypto"
	"fmt"
	"strings"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/sigstore/sigstore/pkg/signature/kms/hashivault"
	sigopts "github.com/sigstore/sigstore/pkg/signature/options"
)

// kmsScheme is the KMS URI scheme of ref, of those sigstore's providers
// take, or "".
func kmsScheme(ref string) string {
	for _, s := range []string{"hashivault://", "openbao://", "awskms://", "gcpkms://", "azurekms://"} {
		if strings.HasPrefix(ref, s) {
			return s
		}
	}
	return ""
}

// openKMS opens a key in a KMS through sigstore's provider for it. Only
// HashiCorp Vault's and OpenBao's transit engine is linked: it is the KMS
// an air-gapped site runs itself, and it adds 28 packages to the build,
// where the cloud providers' SDKs would add hundreds. The provider is
// called directly rather than through kms.Get, which would otherwise run a
// sigstore-kms-<scheme> plugin found in PATH for the other schemes.
//
// The server and its token come from the environment (VAULT_ADDR or
// BAO_ADDR, VAULT_TOKEN or BAO_TOKEN, TRANSIT_SECRET_ENGINE_PATH), as in
// cosign; the transit key must be ecdsa-p256.
func openKMS(ctx context.Context, ref string) (signature.SignerVerifier, error) {
	switch scheme := kmsScheme(ref); scheme {
	case "hashivault://", "openbao://":
		if err := hashivault.ValidReference(ref); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKey, err)
		}
		sv, err := hashivault.LoadSignerVerifier(ref, crypto.SHA256, sigopts.WithContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrKey, err)
		}
		return sv, nil
	default:
		return nil, fmt.Errorf("%w: %s keys: the provider is not linked into this build (hashivault:// and openbao:// are; "+
			"sign with a key file, a pkcs11: URI or a Vault or OpenBao transit key)", ErrNotLinked, scheme)
	}
}

package main

import (
	"context"
	"fmt"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/publish/keyless"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release/verify"
)

type keylessFlags struct {
	enabled                    bool
	fulcio, rekor, trustedRoot string
}

func (k *keylessFlags) register(c *cobra.Command) {
	c.Flags().BoolVar(&k.enabled, "keyless", false, "sign keyless: Fulcio certificate for the GitHub Actions OIDC token, Rekor transparency log")
	c.Flags().StringVar(&k.fulcio, "fulcio-url", keyless.PublicFulcio, "Fulcio instance for --keyless")
	c.Flags().StringVar(&k.rekor, "rekor-url", keyless.PublicRekor, "Rekor instance for --keyless")
	c.Flags().StringVar(&k.trustedRoot, "trusted-root", "", "Sigstore trusted_root.json for the final verification of a keyless release (default: the public-good root via TUF)")
}

// verifyOptions loads the trust root the final verification of a keyless
// release checks against; key-based releases need none.
func (k *keylessFlags) verifyOptions() (verify.Options, error) {
	if !k.enabled {
		return verify.Options{}, nil
	}
	var tr *root.TrustedRoot
	var err error
	if k.trustedRoot != "" {
		tr, err = root.NewTrustedRootFromPath(k.trustedRoot)
	} else {
		tr, err = root.FetchTrustedRoot()
	}
	if err != nil {
		return verify.Options{}, fmt.Errorf("loading the Sigstore trusted root: %w", err)
	}
	return verify.Options{TrustedRoot: tr}, nil
}

func (k *keylessFlags) newSigner(ctx context.Context) (*sign.Signer, error) {
	return keyless.New(ctx, keyless.Options{FulcioURL: k.fulcio, RekorURL: k.rekor})
}

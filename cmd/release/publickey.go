package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/signkey"
	"github.com/reloader-dev/reloader/release/trust"
)

type publicKeyFlags struct {
	key, outFile string
	output       cli.Output
}

func newPublicKeyCmd() *cobra.Command {
	f := &publicKeyFlags{}
	c := &cobra.Command{
		Use:   "public-key",
		Short: "Print the public key of a signing key (a file, a PKCS#11 token or a KMS key)",
		Long: `public-key prints, as PEM, the public half of the key --key names, as
` + "`cosign public-key`" + ` does: what verifiers are given (cosign verify --key,
reloader-mirror --key) when the private key is in a token they cannot read.
The key's sha256 fingerprint, the one verification reports name, goes to
stderr (and into --output json).

A pkcs11: URI needs a reloader-release built with PKCS#11 support
(CGO_ENABLED=1 go build -tags pkcs11key ./cmd/release); give the PIN in
COSIGN_PKCS11_PIN rather than as the URI's pin-value, which would be in
the process's argv.` + cli.ExitCodesHelp,
		Example: `  # export the HSM key's public half for the consumers of the release
  COSIGN_PKCS11_PIN=... reloader-release public-key \
    --key 'pkcs11:token=release;object=reloader?module-path=/usr/lib/softhsm/libsofthsm2.so' \
    --outfile cosign.pub

  # the fingerprint of a key file, for a script
  COSIGN_PASSWORD=... reloader-release public-key --key cosign.key -o json | jq -r .sha256`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPublicKey(cmd, f) },
	}
	c.Flags().StringVar(&f.key, "key", "", "signing key: a cosign key file, a pkcs11: URI or a KMS URI (required)")
	c.Flags().StringVar(&f.outFile, "outfile", "", "write the PEM public key to this file instead of stdout")
	f.output.AddFlags(c.Flags())
	return c
}

func runPublicKey(cmd *cobra.Command, f *publicKeyFlags) error {
	if err := f.output.Check(); err != nil {
		return err
	}
	if f.key == "" {
		return cli.Usage(fmt.Errorf("--key is required"))
	}
	key, err := openKey(cmd.Context(), cmd, f.key)
	if err != nil {
		return err
	}
	defer key.Close()
	pub, err := trust.ParsePublicKey(key.PublicKeyPEM)
	if err != nil {
		return fmt.Errorf("reading the public key of %s: %w", key.Name, err)
	}
	fp := trust.KeyFingerprint(pub)
	if f.outFile != "" {
		if err := os.WriteFile(f.outFile, key.PublicKeyPEM, 0o644); err != nil {
			return fmt.Errorf("writing the public key: %w", err)
		}
	}
	if f.output.JSON() {
		return cli.WriteJSON(cmd.OutOrStdout(), map[string]any{"key": key.Name, "kind": key.Kind, "sha256": fp, "publicKey": string(key.PublicKeyPEM)})
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "public key of %s (%s): sha256:%s\n", key.Name, key.Kind, fp)
	if f.outFile == "" {
		_, err = cmd.OutOrStdout().Write(key.PublicKeyPEM)
	}
	return err
}

// openKey opens the signing key a --key flag names, the password of a key
// file from COSIGN_PASSWORD, as cosign reads them.
func openKey(ctx context.Context, cmd *cobra.Command, ref string) (*signkey.Key, error) {
	warnPIN(cmd, ref)
	return signkey.Open(ctx, signkey.Options{Ref: ref, Password: []byte(os.Getenv("COSIGN_PASSWORD"))})
}

// warnPIN: cosign accepts a token's PIN in the URI, so we do too, but the
// PIN is then in argv for every user of the machine to read.
func warnPIN(cmd *cobra.Command, ref string) {
	if signkey.PINInURI(ref) {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning: the PKCS#11 URI carries the PIN (pin-value), which any user of this machine can read in the process list; set COSIGN_PKCS11_PIN instead")
	}
}

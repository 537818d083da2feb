package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/internal/cli"
	"github.com/reloader-dev/reloader/internal/progress"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
)

func (g *globals) exportCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "export",
		Short: "Verify a release and write it to one archive for the air gap",
		Example: `  reloader-mirror export --lock-ref ghcr.io/reloader-dev/reloader-release:v1.2.3 --key cosign.pub \
      --to reloader-v1.2.3.tar.zst
  reloader-mirror export --lock reloader-release.json --key cosign.pub --to ./reloader-layout  # a directory; re-runs resume`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return cli.Usage(errors.New("export needs --to"))
			}
			return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error {
				eo := mirror.ExportOptions{Path: out, Concurrency: g.concurrency, Progress: g.progress()}
				var err error
				if g.trust.Key != "" {
					if eo.PublicKeyPEM, err = os.ReadFile(g.trust.Key); err != nil {
						return cli.Usage(fmt.Errorf("--key: %w", err))
					}
				}
				if g.trust.TrustedRoot != "" {
					if eo.TrustedRootJSON, err = os.ReadFile(g.trust.TrustedRoot); err != nil {
						return cli.Usage(fmt.Errorf("--trusted-root: %w", err))
					}
				}
				rel, err := mirror.Verify(cmd.Context(), in.src, in.lockJSON, in.lockBundle, in.verifier)
				if err != nil {
					return err
				}
				res, err := rel.Export(cmd.Context(), eo)
				if err != nil {
					return err
				}
				return g.emit(res, func(w io.Writer) {
					fmt.Fprintf(w, "Exported %s to %s: %d manifests, %d blobs, %s (verified)\n", res.Version, res.Path, res.Manifests, res.Blobs, progress.Bytes(res.Bytes))
				})
			})
		},
	}
	c.Flags().StringVar(&out, "to", "", "archive to write: NAME.tar, NAME.tar.zst (zstd) or a directory (OCI layout)")
	c.Flags().IntVarP(&g.concurrency, "concurrency", "j", 4, "blobs fetched in parallel")
	return c
}

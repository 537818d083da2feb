package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/page"
	"github.com/reloader-dev/reloader/release"
)

func newPageCmd() *cobra.Command {
	var lockPath, out, sbomURL string
	c := &cobra.Command{
		Use:   "page",
		Short: "Render the versions page (Markdown and HTML) from a release lock",
		Example: `  reloader-release page --lock _out/release/reloader-release.json --out _out/release/page \
    --sbom-base-url https://github.com/reloader-dev/reloader/releases/download/v1.2.3/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := os.ReadFile(lockPath)
			if err != nil {
				return cli.Usage(err)
			}
			l, err := release.Parse(data)
			if err != nil {
				return cli.Usage(err)
			}
			if err := page.Write(out, l, page.Options{SBOMBaseURL: sbomURL}); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/versions.md and %s/index.html\n", out, out)
			return nil
		},
	}
	c.Flags().StringVar(&lockPath, "lock", release.LockFileName, "the release lock")
	c.Flags().StringVar(&out, "out", "page", "output directory")
	c.Flags().StringVar(&sbomURL, "sbom-base-url", "../sbom/", "URL prefix of the SBOM files")
	return c
}

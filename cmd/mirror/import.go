package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
)

func (a *app) importCmd() *cobra.Command {
	g := a.command()
	rf := &rescanFlags{}
	c := &cobra.Command{
		Use:   "import",
		Short: "Push an archive into a registry after verifying it completely, offline",
		Long: `import checks the archive's checksums, the lock's signature and every
artifact's signatures before the first byte is pushed; then it pushes in a
safe order, verifies the copy at the target, and writes tags last.

A split archive (export --split-size) is given by its part list or the
directories holding its parts (-f repeated); each part is checked against
the part list before use, and a missing or damaged part is named.

A delta archive (export --since) holds only what the release before it
lacks: import first checks, by HEAD requests, that the target holds the
rest, and refuses naming what is missing and the release to import first.
The whole release is then verified, from the archive and the target, before
anything is pushed, and again at the target before any tag is written.

An interrupted import (killed, a registry restart) completes on the next
run: what the target already holds is not sent again, and no tag is written
before the whole release is verified at the target.` + tagsHelp,
		Example: `  reloader-mirror import -f reloader-v1.2.3.tar.zst --key cosign.pub \
      --target harbor.corp.example/platform/reloader
  reloader-mirror import -f reloader-v1.2.3.tar.zst \
      --certificate-identity https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3 \
      --certificate-oidc-issuer https://token.actions.githubusercontent.com \
      --trusted-root-sha256 <sha256 of trusted_root.json, as the release notes publish it> --expect-version v1.2.3 \
      --target quay.corp.example/reloader -o json
  # A split archive: parts in any order, from one directory or several
  reloader-mirror import -f /media/disc1 -f /media/disc2 --key cosign.pub --target harbor.corp.example/platform/reloader`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(g.files) == 0 && g.archive == "" {
				return cli.Usage(errors.New("import needs --file"))
			}
			if err := rf.check(); err != nil {
				return err
			}
			return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error {
				// The rescan reads the release import verified, before
				// anything is pushed.
				return g.mirrorRun(cmd, in, cl, func(rel *mirror.Verified) error { return g.rescan(cmd.Context(), rel, rf) })
			})
		},
	}
	g.releaseFlags(c)
	g.targetFlags.register(c, true)
	g.transferFlagsOn(c)
	rf.register(c)
	return c
}

// Command reloader-mirror copies a signed Reloader release, by digest, into
// an internal registry (Harbor, Artifactory, Nexus, Quay), directly or
// across an air gap through one archive, and verifies it offline first.
//
// Exit codes are internal/cli's table: 0 success, 1 error, 2 usage error,
// 3 verification refused (nothing was pushed).
package main

import (
	"context"
	"io"
	"os"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI and returns its exit code (see cli.ExitCode).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(flagsAfterCommand(root, args))
	root.SetOut(stdout)
	root.SetErr(stderr)
	return cli.Report("reloader-mirror", root.ExecuteContext(ctx), stderr)
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	return (&app{stdout: stdout, stderr: stderr}).root()
}

// root composes the command tree, each command with its own flags. Most of its length is the root's
// help text, which reads best in one piece.
func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "reloader-mirror",
		Short: "Copy a signed Reloader release by digest into your registry, verified offline",
		Long: `reloader-mirror moves one Reloader release, as one signed unit, into an internal
registry: both image variants with every platform, the Helm chart (byte-exact),
SBOMs, attestations and signatures in both formats (cosign .sig/.att tags and
Sigstore bundles as OCI referrers). Digests never change.

Before the first byte is pushed it verifies, offline, the release lock's
signature and every signature the lock lists against the trust policy you
give (--key, or --certificate-identity + --certificate-oidc-issuer with a
trusted root). A release whose lock records no vulnerability scan is refused
unless --allow-unscanned is given, and one whose images or indexes lack SLSA
provenance from that signer, naming the lock's source and commit, unless
--allow-no-provenance is given. After pushing it reads everything back,
verifies again, and only then writes tags.` + advisoriesHelp + replayHelp + downgradeHelp + "\n" + cli.ScanPolicyHelp + cli.ExitCodesHelp,
		Example: `  # Connected side: carry the release across the air gap in one file
  reloader-mirror export --lock-ref ghcr.io/reloader-dev/reloader-release:v1.2.3 \
      --key cosign.pub -f reloader-v1.2.3.tar.zst

  # Disconnected side: verify offline, then push into Harbor
  reloader-mirror import -f reloader-v1.2.3.tar.zst --key cosign.pub \
      --target harbor.corp.example/platform/reloader

  # Then install pinned by digest
  reloader-mirror values -f reloader-v1.2.3.tar.zst --key cosign.pub \
      --target harbor.corp.example/platform/reloader

  # During a signing-key rotation: accept the new key, and the old one
  # through 31 January 2027 (by this machine's clock), then refuse it
  reloader-mirror import -f reloader-v1.2.3.tar.zst \
      --key new.pub --key old.pub,not-after=2027-01-31 \
      --target harbor.corp.example/platform/reloader`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(a.planCmd(), a.copyCmd(), a.exportCmd(), a.importCmd(), a.verifyCmd(), a.valuesCmd(), a.policyCmd(),
		a.reviewCmd())
	replayRules(root)
	cli.Wire(root)
	return root
}

// flagsAfterCommand moves flags given before the command (reloader-mirror
// --key k.pub import ...) to after it. They were the root's flags until
// each command declared its own, and scripts written then still run; a flag
// the command does not take is then refused by that command, by name.
func flagsAfterCommand(root *cobra.Command, args []string) []string {
	for i, a := range args {
		if a == "--" {
			return args
		}
		c, _, err := root.Find([]string{a})
		if err != nil || c == root {
			continue
		}
		if i == 0 {
			return args
		}
		// The command's own subcommands (policy check) stay with it.
		end := i + 1
		for end < len(args) {
			sub, _, err := c.Find([]string{args[end]})
			if err != nil || sub == c {
				break
			}
			c, end = sub, end+1
		}
		out := append([]string{}, args[i:end]...)
		out = append(out, args[:i]...)
		return append(out, args[end:]...)
	}
	return args
}

package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

type rebuildFlags struct {
	// verifyFlags: rebuild trusts the lock and the provenance it builds
	// from only as far as verify would.
	verifyFlags
	source, out, license string
}

func newRebuildCmd() *cobra.Command {
	f := &rebuildFlags{}
	c := &cobra.Command{
		Use:   "rebuild",
		Short: "Rebuild a release's images from its commit and compare digests with the lock",
		Long: `rebuild reproduces every platform image and index of a release: from a
checkout of the lock's commit (--source), with the Go toolchain its provenance
names, into a local OCI layout (<out>/oci). It pushes nothing. For each image
it prints "identical", or the first layer and file that differ from the
released image. A release that does not reproduce exits 3.

Before building anything it verifies the release exactly as verify does,
against the signer you name (--key, or keyless --certificate-identity with
--certificate-oidc-issuer and --trusted-root): the lock's signature and every
signature and attestation the lock lists, provenance included. The main
package it builds comes from that signed provenance and must be a plain
./-relative package path; anything else (a flag such as -toolexec=, "..",
an absolute path) is refused with exit 3, and so is a lock that is not the --expect-version
given.` + cli.ExitCodesHelp,
		Example: `  git checkout $(jq -r .commit reloader-release.json)
  reloader-release rebuild --lock reloader-release.json --key cosign.pub --source . --out _out/rebuild

  # keyless release from GitHub Actions
  reloader-release rebuild --lock reloader-release.json --trusted-root trusted_root.json \
    --certificate-identity https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3 \
    --certificate-oidc-issuer https://token.actions.githubusercontent.com

  # a script reads the verdict per image
  reloader-release rebuild --lock reloader-release.json --key cosign.pub -o json | jq '.images[] | {name, platform, identical}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runRebuild(cmd, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.lock, "lock", release.LockFileName, "the release lock")
	fl.StringVar(&f.bundle, "bundle", "", "the lock's Sigstore bundle (default <lock>.sigstore.json)")
	f.trust.AddFlags(fl)
	fl.StringVar(&f.source, "source", ".", "checkout of the lock's commit")
	fl.StringVar(&f.out, "out", "_out/rebuild", "where the binaries and the OCI layout go")
	fl.StringVar(&f.license, "license-file", "", "license text shipped under /licenses (default <source>/LICENSE)")
	fl.StringVar(&f.expectVersion, "expect-version", "", "refuse a lock that is not exactly this version, e.g. v1.2.3 (exit 3)")
	f.output.AddFlags(c.Flags())
	// The same verification as verify's, the scan policy included.
	f.scan.Register(c)
	return c
}

func runRebuild(cmd *cobra.Command, f *rebuildFlags) error {
	if err := f.output.Check(); err != nil {
		return err
	}
	l, err := f.verifiedLock(cmd.Context())
	if err != nil {
		return err
	}
	if err := (trust.Binding{Version: f.expectVersion}).Check(l); err != nil {
		return fmt.Errorf("lock %s: %w", f.lock, err)
	}
	// A git checkout must be at the lock's commit; a plain directory (an
	// unpacked source archive) is taken as given.
	if head, err := git(f.source, "rev-parse", "HEAD"); err == nil && head != l.Commit {
		return cli.Usage(fmt.Errorf("--source %s is at %s, the release was built from %s: check that commit out", f.source, head, l.Commit))
	}
	license := f.license
	if license == "" {
		license = filepath.Join(f.source, "LICENSE")
	}
	var licenses []string
	if _, err := os.Stat(license); err == nil {
		licenses = []string{license}
	}
	rep, err := pipeline.Rebuild(cmd.Context(), pipeline.RebuildOptions{Lock: l, ModuleDir: f.source, LicenseFiles: licenses, OutDir: f.out,
		Remote: []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}, Log: cmd.ErrOrStderr()})
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	if f.output.JSON() {
		if err := cli.WriteJSON(w, rep); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "Release %s, commit %s, %s, rebuilt in %.1fs into %s\n", rep.Version, rep.Commit, rep.GoVersion, rep.Seconds, rep.Layout)
		for _, i := range rep.Images {
			if i.Identical {
				fmt.Fprintf(w, "  identical  %-11s %-13s %-12s %s\n", i.Kind, i.Name, i.Platform, i.Locked)
				continue
			}
			fmt.Fprintf(w, "  DIFFERS    %-11s %-13s %-12s released %s, rebuilt %s\n", i.Kind, i.Name, i.Platform, i.Locked, i.Rebuilt)
			if i.File != "" || i.LayerDigest != "" {
				fmt.Fprintf(w, "             first differing layer %d (%s), file %s: %s\n", i.Layer, i.LayerDigest, i.File, i.Difference)
			} else {
				fmt.Fprintf(w, "             %s\n", i.Difference)
			}
		}
	}
	if !rep.Identical() {
		return fmt.Errorf("%w: release %s did not reproduce from %s", trust.ErrUntrusted, l.Version, f.source)
	}
	return nil
}

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/release"
)

type buildFlags struct {
	registry, version, commit, source, ubiBase, main, out, license string
	output                                                         cli.Output
}

func newBuildCmd() *cobra.Command {
	f := &buildFlags{}
	c := &cobra.Command{
		Use:   "build",
		Short: "The build stage alone: images as an OCI layout and their index digests, nothing signed",
		Long: `build runs the first of a release's two stages: it compiles the controller for
every platform and assembles every variant's images and indexes (standard,
UBI and their -fips builds) into an OCI layout (<out>/oci), and prints each
index as NAME@DIGEST. It needs no key, no OIDC token and no right to write
to any registry (it only reads the UBI base --ubi-base names).

The release workflow runs it in a job that cannot sign; a separate job takes
the layout and these digests alone (publish --from-build --expect-index),
checks every blob against them, and generates SBOMs and SLSA provenance,
gates, signs and publishes. So the provenance is written by a job that ran
no build, and the build never held the signing identity.` + cli.ExitCodesHelp,
		Example: `  # the release workflow's build job
  SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) reloader-release build \
    --registry ghcr.io/reloader-dev --version v1.2.3 \
    --ubi-base "$(cat hack/release/ubi-base)" --out _out/build > _out/build/indexes.txt

  # its signing job, with the layout and nothing else from the build job
  reloader-release publish --from-build _out/build \
    --expect-index reloader@sha256:... --expect-index reloader-ubi@sha256:... \
    --registry ghcr.io/reloader-dev --version v1.2.3 --ubi-base ... --trivy trivy --keyless`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBuild(cmd, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.registry, "registry", "", "repository prefix the release will be published to, e.g. ghcr.io/reloader-dev (required: it is in the images' names)")
	fl.StringVar(&f.version, "version", "", "release version, e.g. v1.2.3 (required)")
	fl.StringVar(&f.commit, "commit", "", "commit being released (default: git HEAD)")
	fl.StringVar(&f.source, "source", "https://github.com/reloader-dev/reloader", "source repository URL")
	fl.StringVar(&f.ubiBase, "ubi-base", "", "UBI base index pinned by digest, name@sha256:... (required)")
	fl.StringVar(&f.main, "main", "./cmd/reloader", "the controller's main package")
	fl.StringVar(&f.out, "out", "_out/build", "output directory (the OCI layout, build.json, binaries)")
	fl.StringVar(&f.license, "license-file", "LICENSE", "license text shipped under /licenses")
	f.output.AddFlags(c.Flags())
	return c
}

func runBuild(cmd *cobra.Command, f *buildFlags) error {
	if err := f.output.Check(); err != nil {
		return err
	}
	if f.registry == "" || f.version == "" || f.ubiBase == "" {
		return cli.Usage(errors.New("--registry, --version and --ubi-base are required"))
	}
	if err := release.CheckVersion(f.version); err != nil {
		return cli.Usage(fmt.Errorf("--version: %w", err))
	}
	o, err := productOptions(productFlags{registry: f.registry, version: f.version, commit: f.commit, source: f.source,
		ubiBase: f.ubiBase, main: f.main, out: f.out, license: f.license})
	if err != nil {
		return err
	}
	o.Log = cmd.ErrOrStderr()
	rec, err := pipeline.Build(cmd.Context(), o)
	if err != nil {
		return err
	}
	return f.output.Emit(cmd.OutOrStdout(), rec, func(w io.Writer) {
		for _, ix := range rec.Indexes {
			fmt.Fprintf(w, "%s@%s\n", ix.Name, ix.Digest)
		}
	})
}

// productFlags are what build and publish both take to describe the
// release; both stages must agree on them, so one function maps them.
type productFlags struct {
	registry, version, commit, source, ubiBase, main, out, license string
}

// productOptions is the release as both stages describe it: names,
// metadata, the checkout, the creation time and the commit.
func productOptions(f productFlags) (pipeline.Options, error) {
	if _, err := os.Stat(f.license); err != nil {
		return pipeline.Options{}, cli.Usage(fmt.Errorf("license file: %w", err))
	}
	created, err := sourceDateEpoch(".")
	if err != nil {
		return pipeline.Options{}, err
	}
	commit := f.commit
	if commit == "" {
		if commit, err = headCommit("."); err != nil {
			return pipeline.Options{}, err
		}
	}
	return pipeline.Options{
		Version: f.version, Commit: commit, Source: f.source, Created: created, Now: time.Now(),
		ModuleDir: ".", MainPackage: f.main, Registry: f.registry, StandardName: "reloader", UBIName: "reloader-ubi",
		UBIBase: f.ubiBase, LicenseFiles: []string{f.license}, Licenses: "Apache-2.0", Vendor: "Reloader contributors",
		Summary:     "Reloads Kubernetes workloads when their ConfigMaps and Secrets change",
		Description: "Reloader watches ConfigMaps and Secrets and rolls the Deployments, StatefulSets and DaemonSets that use them.",
		OutDir:      f.out,
	}, nil
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/internal/progress"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
)

// mirrorRun verifies the release and pushes it; verified, when given, runs
// on the verified release before anything is pushed (import's rescan).
func (g *command) mirrorRun(cmd *cobra.Command, in *releaseInput, cl *registry.Client, verified func(*mirror.Verified) error) error {
	repos, err := g.repos()
	if err != nil {
		return err
	}
	if in.deltaMapping != nil {
		// Before anything is read from the target or pushed to it: a
		// delta needs its base there, checked by HEAD requests only.
		if err := mirror.CheckDeltaBase(cmd.Context(), cl, in.deltaMapping, in.archive.Delta); err != nil {
			return err
		}
	}
	opts := mirror.PushOptions{
		Client: cl, Target: g.target, Repos: repos, Concurrency: g.concurrency, Retries: g.retries,
		Progress: g.progress(), AllowDowngrade: g.expect.allowDowngrade,
	}
	rel, err := in.lock.VerifyToPush(cmd.Context(), in.src, opts)
	if err != nil {
		return err
	}
	if verified != nil {
		if err := verified(rel); err != nil {
			return err
		}
	}
	if in.deltaMapping != nil {
		if err := rel.CheckDeltaComplete(cmd.Context(), cl, in.deltaMapping, in.archive.Layout, in.archive.Delta); err != nil {
			return err
		}
	}
	rc, err := rel.Push(cmd.Context(), opts)
	if err != nil {
		return err
	}
	rc.Standing = in.standing
	if g.receipt != "" {
		b, err := json.MarshalIndent(rc, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the receipt: %w", err)
		}
		if err := os.WriteFile(g.receipt, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("writing the receipt: %w", err)
		}
	}
	return g.emit(rc, func(w io.Writer) {
		s := rc.Stats
		fmt.Fprintf(w, "Mirrored %s to %s in %s: verified before and after push\n", rc.Version, rc.Target, rc.Duration)
		fmt.Fprintf(w, "  blobs: %d pushed (%s), %d mounted, %d already present\n", s.BlobsPushed, progress.Bytes(s.BytesPushed), s.BlobsMounted, s.BlobsPresent)
		fmt.Fprintf(w, "  manifests: %d pushed, %d present; tags: %d written, %d present; fallback indexes: %d\n", s.ManifestsPushed, s.ManifestsPresent, s.TagsWritten, s.TagsPresent, s.FallbackIndexes)
		fmt.Fprintf(w, "  lock: %s\n", rc.Lock)
		printTagChanges(w, rc.Tags)
		if rc.Downgrade != nil {
			fmt.Fprintf(w, "  downgrade: %s over %s, allowed by --allow-downgrade\n", rc.Downgrade.Version, rc.Downgrade.NewestAtTarget)
		}
	})
}

func (a *app) copyCmd() *cobra.Command {
	g := a.command()
	c := &cobra.Command{
		Use:   "copy",
		Short: "Copy a release registry to registry, verified before and after",
		Long: `copy verifies the release at its source, pushes it to --target by digest,
verifies the copy at the target, and only then writes tags.` + tagsHelp,
		Example: `  reloader-mirror copy --lock-ref ghcr.io/reloader-dev/reloader-release:v1.2.3 --key cosign.pub \
      --target harbor.corp.example/platform/reloader --receipt receipt.json
  # Artifactory repository key, chart to a separate Helm repository
  reloader-mirror copy --lock reloader-release.json --key cosign.pub \
      --target artifactory.corp.example/docker-local/reloader \
      --map charts/reloader=artifactory.corp.example/helm-oci/reloader`,
		Args: cobra.NoArgs,
		RunE: g.mirrorCommand,
	}
	g.releaseFlags(c)
	g.targetFlags.register(c, true)
	g.transferFlagsOn(c)
	return c
}

// mirrorCommand is copy and import: open the source (a registry lock or an
// archive), then verify and push.
func (g *command) mirrorCommand(cmd *cobra.Command, _ []string) error {
	return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error { return g.mirrorRun(cmd, in, cl, nil) })
}

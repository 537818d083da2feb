package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/internal/progress"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/archive"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release/trust"
)

func (a *app) exportCmd() *cobra.Command {
	g := a.command()
	var out, since, split string
	c := &cobra.Command{
		Use:   "export",
		Short: "Verify a release and write it to one archive for the air gap",
		Example: `  reloader-mirror export --lock-ref ghcr.io/reloader-dev/reloader-release:v1.2.3 --key cosign.pub \
      --to reloader-v1.2.3.tar.zst
  reloader-mirror export --lock reloader-release.json --key cosign.pub --to ./reloader-layout  # a directory; re-runs resume
  # Parts for removable media or a data diode; import takes them in any order
  reloader-mirror export --lock-ref ghcr.io/reloader-dev/reloader-release:v1.2.3 --key cosign.pub \
      --to reloader-v1.2.3.tar.zst --split-size 650MiB
  # An upgrade: only what v1.2.3 lacks; import it where v1.2.3 was imported
  reloader-mirror export --lock-ref ghcr.io/reloader-dev/reloader-release:v1.2.4 --key cosign.pub \
      --since reloader-v1.2.3.tar.zst --to reloader-v1.2.4-since-v1.2.3.tar.zst`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return cli.Usage(errors.New("export needs --to"))
			}
			return g.withRelease(cmd, func(cl *registry.Client, in *releaseInput) error {
				eo, err := g.exportOptions(out, split)
				if err != nil {
					return err
				}
				rel, err := in.lock.Verify(cmd.Context(), in.src)
				if err != nil {
					return err
				}
				if since != "" {
					if eo.Since, err = g.loadBase(cmd.Context(), cl, in, since); err != nil {
						return err
					}
				}
				res, err := rel.Export(cmd.Context(), eo)
				if err != nil {
					return err
				}
				res.Standing = in.standing
				return g.emit(res, func(w io.Writer) {
					fmt.Fprintf(w, "Exported %s to %s: %d manifests, %d blobs, %s (verified)\n", res.Version, res.Path, res.Manifests, res.Blobs, progress.Bytes(res.Bytes))
					if res.PartList != "" {
						fmt.Fprintf(w, "  in %d parts of at most %s, listed with their sha256 in %s\n", len(res.Parts), progress.Bytes(eo.SplitSize), res.PartList)
					}
					if res.Since != nil {
						fmt.Fprintf(w, "  delta against %s (lock %s): left out %d manifests and %d blobs, %s, which the target must already hold\n",
							res.Since.Version, res.Since.LockDigest, res.OmittedManifests, res.OmittedBlobs, progress.Bytes(res.OmittedBytes))
					}
				})
			})
		},
	}
	g.releaseFlags(c)
	c.Flags().StringVar(&out, "to", "", "archive to write: NAME.tar, NAME.tar.zst (zstd) or a directory (OCI layout)")
	c.Flags().IntVarP(&g.concurrency, "concurrency", "j", 4, "requests in parallel: blobs fetched, and the reads of manifests and signatures")
	c.Flags().StringVar(&split, "split-size", "", "write NAME.tar[.zst] as numbered parts of at most this size (e.g. 650MiB, 4GB) and a part list NAME.tar[.zst].parts")
	c.Flags().StringVar(&since, "since", "", "make a delta against the release the target already holds: its archive, its signed lock file (with LOCK.sigstore.json) or its lock reference; verified with the same trust flags")
	return c
}

// exportOptions reads the flags that shape the archive: its path, its
// parts, and the trust material it carries for the disconnected side.
func (g *command) exportOptions(out, split string) (mirror.ExportOptions, error) {
	eo := mirror.ExportOptions{Path: out, Concurrency: g.concurrency, Progress: g.progress()}
	var err error
	if split != "" {
		if eo.SplitSize, err = archive.ParseSize(split); err != nil || eo.SplitSize <= 0 {
			return eo, cli.Usage(fmt.Errorf("--split-size: %v", orPositive(err)))
		}
		if !strings.HasSuffix(out, ".tar") && !strings.HasSuffix(out, ".tar.zst") {
			return eo, cli.Usage(fmt.Errorf("--split-size needs --to NAME.tar or NAME.tar.zst, not %s", out))
		}
	}
	// The archive carries the key for its reader's information only (the
	// importer names its own): with several keys, none is carried.
	if len(g.trust.Keys) == 1 {
		k, err := cli.ParseKeySpec(g.trust.Keys[0])
		if err != nil {
			return eo, cli.Usage(fmt.Errorf("--key: %w", err))
		}
		if eo.PublicKeyPEM, err = os.ReadFile(k.Path); err != nil {
			return eo, cli.Usage(fmt.Errorf("--key: %w", err))
		}
	}
	if g.trust.TrustedRoot != "" {
		if eo.TrustedRootJSON, err = os.ReadFile(g.trust.TrustedRoot); err != nil {
			return eo, cli.Usage(fmt.Errorf("--trusted-root: %w", err))
		}
	}
	return eo, nil
}

// loadBase resolves --since: an archive (a .tar, .tar.zst or layout
// directory), a lock file with its bundle beside it, or a lock reference in
// a registry. Its lock is verified with the user's trust flags (not bound
// to the new release's version or scan policy: it is an older release) and
// its manifests read by digest from where it is, then from the release's
// source.
func (g *command) loadBase(ctx context.Context, cl *registry.Client, in *releaseInput, since string) (*mirror.BaseRelease, error) {
	p := in.policy
	p.Expect, p.Scan = trust.Binding{}, nil
	v, err := in.vs.make(p)
	if err != nil {
		return nil, err
	}
	st, statErr := os.Stat(since)
	switch {
	case statErr == nil && (st.IsDir() || strings.HasSuffix(since, ".tar") || strings.HasSuffix(since, ".tar.zst") || archive.IsPartList(since)):
		a, err := mirror.OpenArchive(ctx, []string{since}, g.workDir, g.limits.limits())
		if err != nil {
			return nil, fmt.Errorf("--since %s: %w", since, err)
		}
		defer a.Close()
		return mirror.LoadBase(ctx, a.LockJSON, a.LockBundle, &mirror.FallbackSource{First: a.Layout, Then: in.src}, v)
	case statErr == nil:
		lj, err := os.ReadFile(since)
		if err != nil {
			return nil, fmt.Errorf("--since: %w", err)
		}
		lb, err := os.ReadFile(since + ".sigstore.json")
		if err != nil {
			return nil, fmt.Errorf("--since %s: reading its signature bundle: %w", since, err)
		}
		return mirror.LoadBase(ctx, lj, lb, in.src, v)
	case strings.HasSuffix(since, ".json") || strings.HasSuffix(since, ".tar") || strings.HasSuffix(since, ".tar.zst") || strings.HasPrefix(since, ".") || strings.HasPrefix(since, "/"):
		return nil, cli.Usage(fmt.Errorf("--since %s: no such file", since))
	default:
		lj, lb, err := mirror.FetchLock(ctx, cl, since)
		if err != nil {
			return nil, fmt.Errorf("--since %s: %w", since, err)
		}
		return mirror.LoadBase(ctx, lj, lb, in.src, v)
	}
}

func orPositive(err error) error {
	if err != nil {
		return err
	}
	return errors.New("a part must hold at least one byte")
}

package mirror

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/reloader-dev/reloader/internal/progress"
	"github.com/reloader-dev/reloader/mirror/archive"
	"github.com/reloader-dev/reloader/release/trust"
)

// ExportOptions configures Export.
type ExportOptions struct {
	Source               Source
	LockJSON, LockBundle []byte
	Policy               trust.Policy
	// PublicKeyPEM and TrustedRootJSON are carried in the archive for the
	// disconnected side (which must still choose to trust them).
	PublicKeyPEM    []byte
	TrustedRootJSON []byte
	// Path is a directory (an OCI layout), or a file ending in .tar or
	// .tar.zst (zstd-compressed).
	Path        string
	Concurrency int
	Progress    progress.Reporter
}

// ExportResult summarises an export.
type ExportResult struct {
	Path         string        `json:"path"`
	Version      string        `json:"version"`
	Manifests    int           `json:"manifests"`
	Blobs        int           `json:"blobs"`
	Bytes        int64         `json:"bytes"`
	Verification *trust.Result `json:"verification"`
}

// Export verifies the release at its source and writes it to one archive.
// A directory export is resumable: blobs already present are kept.
func Export(ctx context.Context, opts ExportOptions) (*ExportResult, error) {
	if opts.Progress == nil {
		opts.Progress = progress.Discard{}
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	v, err := trust.NewVerifier(opts.Policy)
	if err != nil {
		return nil, err
	}
	prep, err := Prepare(ctx, opts.Source, opts.LockJSON, opts.LockBundle, v)
	if err != nil {
		return nil, err
	}
	packed := strings.HasSuffix(opts.Path, ".tar") || strings.HasSuffix(opts.Path, ".tar.zst")
	dir := opts.Path
	if packed {
		dir = opts.Path + ".d"
	}
	lay := &archive.Layout{Dir: dir}
	g := prep.Graph
	seen := map[string]bool{}
	var blobs []RepoBlob
	for _, rb := range g.Blobs() {
		if !seen[rb.Digest] {
			seen[rb.Digest] = true
			blobs = append(blobs, rb)
		}
	}
	if err := exportBlobs(ctx, opts, lay, blobs); err != nil {
		return nil, err
	}
	if err := writeLayout(ctx, opts, lay, g); err != nil {
		return nil, err
	}
	res := &ExportResult{Path: opts.Path, Version: prep.Lock.Version, Manifests: len(g.Nodes), Blobs: len(blobs), Bytes: g.UniqueBytes(), Verification: prep.Verification}
	if !packed {
		return res, nil
	}
	if err := pack(ctx, opts, dir, prep.Lock.Created); err != nil {
		return nil, err
	}
	return res, nil
}

// exportBlobs copies every blob not yet in the layout, concurrently: a
// resumed export fetches only what an interrupted one left out.
func exportBlobs(ctx context.Context, opts ExportOptions, lay *archive.Layout, blobs []RepoBlob) error {
	var total int64
	for _, b := range blobs {
		total += b.Size
	}
	opts.Progress.Phase("exporting blobs", total, true)
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(opts.Concurrency)
	for _, b := range blobs {
		eg.Go(func() error {
			if lay.HasBlob(b.Digest, b.Size) {
				opts.Progress.Add(b.Size)
				return nil
			}
			rc, _, err := opts.Source.Blob(ectx, b.Repository, b.Digest)
			if err != nil {
				return fmt.Errorf("fetching blob %s@%s: %w", b.Repository, b.Digest, err)
			}
			defer rc.Close()
			return lay.WriteBlob(b.Digest, b.Size, &countingReader{r: rc, add: opts.Progress.Add})
		})
	}
	if err := eg.Wait(); err != nil {
		return err
	}
	opts.Progress.Done()
	return nil
}

// writeLayout writes the manifests, the signed lock and the trust material
// the disconnected side verifies with, then the index and checksums.
func writeLayout(ctx context.Context, opts ExportOptions, lay *archive.Layout, g *Graph) error {
	var entries []archive.IndexEntry
	for _, n := range g.Nodes {
		if err := lay.WriteBlob(n.Digest, n.Size, strings.NewReader(string(n.Raw))); err != nil {
			return err
		}
		if n.Artifact == nil {
			continue
		}
		ann := map[string]string{"dev.reloader.mirror.repository": n.Repository, "dev.reloader.mirror.kind": string(n.Artifact.Kind)}
		if t := n.Tag(); t != "" {
			ann["org.opencontainers.image.ref.name"] = t
		}
		entries = append(entries, archive.IndexEntry{MediaType: n.MediaType, Digest: n.Digest, Size: n.Size, ArtifactType: n.ArtifactType, Annotations: ann})
	}
	if err := lay.WriteFile(archive.LockFile, opts.LockJSON); err != nil {
		return err
	}
	if err := lay.WriteFile(archive.LockBundleFile, opts.LockBundle); err != nil {
		return err
	}
	if len(opts.PublicKeyPEM) > 0 {
		if err := lay.WriteFile(archive.KeyFile, opts.PublicKeyPEM); err != nil {
			return err
		}
	}
	if len(opts.TrustedRootJSON) > 0 {
		if err := lay.WriteFile(archive.TrustedRootFile, opts.TrustedRootJSON); err != nil {
			return err
		}
	}
	if err := lay.Finish(ctx, entries); err != nil {
		return err
	}
	return nil
}

// pack writes the staged directory as one archive, through a .partial file
// so that a file with the final name is always complete.
func pack(ctx context.Context, opts ExportOptions, dir string, created time.Time) error {
	opts.Progress.Phase("packing "+filepath.Base(opts.Path), 0, false)
	defer opts.Progress.Done()
	tmp := opts.Path + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("creating %s: %w", opts.Path, err)
	}
	err = archive.Pack(ctx, dir, f, strings.HasSuffix(opts.Path, ".zst"), created)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, opts.Path); err != nil {
		return fmt.Errorf("finishing %s: %w", opts.Path, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing the staging directory %s: %w", dir, err)
	}
	return nil
}

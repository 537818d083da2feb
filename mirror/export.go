package mirror

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reloader-dev/reloader/internal/progress"
	"github.com/reloader-dev/reloader/mirror/archive"
	"github.com/reloader-dev/reloader/release/trust"
)

// ExportOptions configures Export.
type ExportOptions struct {
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

// Export writes the verified release to one archive. A directory export is
// resumable: blobs already present are kept.
func (rel *Release) Export(ctx context.Context, opts ExportOptions) (*ExportResult, error) {
	if opts.Progress == nil {
		opts.Progress = progress.Discard{}
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	packed := strings.HasSuffix(opts.Path, ".tar") || strings.HasSuffix(opts.Path, ".tar.zst")
	dir := opts.Path
	if packed {
		dir = opts.Path + ".d"
	}
	lay := &archive.Layout{Dir: dir}
	g := rel.Graph
	// The layout holds each digest once, whichever repository it came from.
	var blobs []RepoBlob
	for _, copies := range byDigest(g.Blobs()) {
		blobs = append(blobs, copies[0])
	}
	if err := rel.exportBlobs(ctx, opts, lay, blobs); err != nil {
		return nil, err
	}
	if err := rel.writeLayout(ctx, opts, lay, g); err != nil {
		return nil, err
	}
	res := &ExportResult{Path: opts.Path, Version: rel.Lock.Version, Manifests: len(g.Nodes), Blobs: len(blobs), Bytes: g.UniqueBytes(), Verification: rel.Verification}
	if !packed {
		return res, nil
	}
	if err := pack(ctx, opts, dir, rel.Lock.Created); err != nil {
		return nil, err
	}
	return res, nil
}

// exportBlobs copies every blob not yet in the layout, concurrently: a
// resumed export fetches only what an interrupted one left out.
func (rel *Release) exportBlobs(ctx context.Context, opts ExportOptions, lay *archive.Layout, blobs []RepoBlob) error {
	var total int64
	groups := make([][]RepoBlob, 0, len(blobs))
	for _, b := range blobs {
		total += b.Size
		groups = append(groups, []RepoBlob{b})
	}
	opts.Progress.Phase("exporting blobs", total, true)
	err := transferBlobs(ctx, opts.Concurrency, groups, func(ctx context.Context, b RepoBlob) error {
		if lay.HasBlob(b.Digest, b.Size) {
			opts.Progress.Add(b.Size)
			return nil
		}
		rc, _, err := rel.src.Blob(ctx, b.Repository, b.Digest)
		if err != nil {
			return fmt.Errorf("fetching blob %s@%s: %w", b.Repository, b.Digest, err)
		}
		defer rc.Close()
		return lay.WriteBlob(b.Digest, b.Size, &countingReader{r: rc, add: opts.Progress.Add})
	})
	if err != nil {
		return err
	}
	opts.Progress.Done()
	return nil
}

// writeLayout writes the manifests, the signed lock and the trust material
// the disconnected side verifies with, then the index and checksums.
func (rel *Release) writeLayout(ctx context.Context, opts ExportOptions, lay *archive.Layout, g *Graph) error {
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
	if err := lay.WriteFile(archive.LockFile, rel.lockJSON); err != nil {
		return err
	}
	if err := lay.WriteFile(archive.LockBundleFile, rel.lockBundle); err != nil {
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

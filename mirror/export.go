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
	// Since makes a delta archive: only what this release holds and Since
	// does not, plus the lock and trust material to verify it, and the
	// record of what was left out (archive.Delta).
	Since *BaseRelease
	// SplitSize, when positive, writes a .tar/.tar.zst as numbered parts
	// of at most this many bytes and a part list (archive.PartList)
	// instead of one file.
	SplitSize int64
}

// ExportResult summarises an export.
type ExportResult struct {
	// Standing is the release's judgment, set by the caller that made it
	// (see Receipt.Standing).
	Standing     *Standing     `json:"standing,omitempty"`
	Path         string        `json:"path"`
	Version      string        `json:"version"`
	Manifests    int           `json:"manifests"`
	Blobs        int           `json:"blobs"`
	Bytes        int64         `json:"bytes"`
	Verification *trust.Result `json:"verification"`
	// Since, OmittedManifests, OmittedBlobs and OmittedBytes describe a
	// delta archive: the release it is against and what it leaves out.
	Since            *archive.DeltaBase `json:"since,omitempty"`
	OmittedManifests int                `json:"omittedManifests,omitempty"`
	OmittedBlobs     int                `json:"omittedBlobs,omitempty"`
	OmittedBytes     int64              `json:"omittedBytes,omitempty"`
	// PartList and Parts name what a split export wrote.
	PartList string   `json:"partList,omitempty"`
	Parts    []string `json:"parts,omitempty"`
}

// Export writes the verified release to one archive. A directory export is
// resumable: blobs already present are kept.
func (rel *Verified) Export(ctx context.Context, opts ExportOptions) (*ExportResult, error) {
	if opts.Progress == nil {
		opts.Progress = progress.Discard{}
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	packed := strings.HasSuffix(opts.Path, ".tar") || strings.HasSuffix(opts.Path, ".tar.zst")
	if opts.SplitSize > 0 && !packed {
		return nil, fmt.Errorf("splitting needs an archive file (NAME.tar or NAME.tar.zst), not the directory %s", opts.Path)
	}
	dir := opts.Path
	if packed {
		dir = opts.Path + ".d"
	}
	lay := &archive.Layout{Dir: dir}
	g := rel.Graph
	delta := &deltaPlan{omitted: map[string]bool{}}
	if opts.Since != nil {
		if err := checkBaseOrder(rel.Lock.Version, rel.LockResult.Digest, opts.Since); err != nil {
			return nil, err
		}
		var err error
		if delta, err = planDelta(g, opts.Since); err != nil {
			return nil, err
		}
		lay.Since = opts.Since.LockDigest
	}
	res := &ExportResult{Path: opts.Path, Version: rel.Lock.Version, Verification: rel.Verification}
	// The layout holds each digest once, whichever repository it came from.
	var blobs []RepoBlob
	for _, copies := range byDigest(g.Blobs()) {
		if delta.omitted[copies[0].Digest] {
			res.OmittedBlobs++
			res.OmittedBytes += copies[0].Size
			continue
		}
		blobs = append(blobs, copies[0])
		res.Bytes += copies[0].Size
	}
	if err := rel.exportBlobs(ctx, opts, lay, blobs); err != nil {
		return nil, err
	}
	if opts.Since != nil {
		b, err := delta.delta.Marshal()
		if err != nil {
			return nil, err
		}
		if err := lay.WriteFile(archive.DeltaFile, b); err != nil {
			return nil, err
		}
		res.Since = &delta.delta.Since
	} else if err := os.Remove(filepath.Join(dir, archive.DeltaFile)); err != nil && !os.IsNotExist(err) {
		// A resumed directory export that was a delta before is not one now.
		return nil, fmt.Errorf("removing a stale %s: %w", archive.DeltaFile, err)
	}
	written, err := rel.writeLayout(ctx, opts, lay, g, delta.omitted)
	if err != nil {
		return nil, err
	}
	res.Manifests, res.Blobs = written.manifests, len(blobs)
	res.Bytes += written.bytes
	res.OmittedManifests, res.OmittedBytes = written.omitted, res.OmittedBytes+written.omittedBytes
	if !packed {
		return res, nil
	}
	pl, err := pack(ctx, opts, dir, rel.Lock.Created)
	if err != nil {
		return nil, err
	}
	if pl != nil {
		res.PartList = opts.Path + archive.PartListSuffix
		for _, p := range pl.Parts {
			res.Parts = append(res.Parts, filepath.Join(filepath.Dir(opts.Path), p.Name))
		}
	}
	return res, nil
}

// exportBlobs copies every blob not yet in the layout, concurrently: a
// resumed export fetches only what an interrupted one left out.
func (rel *Verified) exportBlobs(ctx context.Context, opts ExportOptions, lay *archive.Layout, blobs []RepoBlob) error {
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
		if err := lay.WriteBlob(b.Digest, b.Size, &countingReader{r: rc, add: opts.Progress.Add}); err != nil {
			return err
		}
		opts.Progress.Item("exported "+b.Repository+"@"+b.Digest, b.Size)
		return nil
	})
	if err != nil {
		return err
	}
	opts.Progress.Done()
	return nil
}

// layoutCounts is what writeLayout wrote and left out.
type layoutCounts struct {
	manifests, omitted  int
	bytes, omittedBytes int64
}

// writeLayout writes the manifests (all but those omitted, in a delta), the
// signed lock and the trust material the disconnected side verifies with,
// then the index and checksums.
func (rel *Verified) writeLayout(ctx context.Context, opts ExportOptions, lay *archive.Layout, g *Graph, omitted map[string]bool) (layoutCounts, error) {
	var entries []archive.IndexEntry
	var c layoutCounts
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		first := !seen[n.Digest]
		seen[n.Digest] = true
		if omitted[n.Digest] {
			if first {
				c.omitted++
				c.omittedBytes += n.Size
			}
			continue
		}
		c.manifests++
		if first {
			c.bytes += n.Size
		}
		if err := lay.WriteBlob(n.Digest, n.Size, strings.NewReader(string(n.Raw))); err != nil {
			return c, err
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
	if err := lay.WriteFile(archive.LockFile, rel.signed.json); err != nil {
		return c, err
	}
	if err := lay.WriteFile(archive.LockBundleFile, rel.signed.bundle); err != nil {
		return c, err
	}
	if len(opts.PublicKeyPEM) > 0 {
		if err := lay.WriteFile(archive.KeyFile, opts.PublicKeyPEM); err != nil {
			return c, err
		}
	}
	if len(opts.TrustedRootJSON) > 0 {
		if err := lay.WriteFile(archive.TrustedRootFile, opts.TrustedRootJSON); err != nil {
			return c, err
		}
	}
	if err := lay.Finish(ctx, entries); err != nil {
		return c, err
	}
	return c, nil
}

// pack writes the staged directory as one archive, through a .partial file
// so that a file with the final name is always complete, or as parts and a
// part list when opts.SplitSize is set.
func pack(ctx context.Context, opts ExportOptions, dir string, created time.Time) (*archive.PartList, error) {
	opts.Progress.Phase("packing "+filepath.Base(opts.Path), 0, false)
	defer opts.Progress.Done()
	compress := strings.HasSuffix(opts.Path, ".zst")
	var pl *archive.PartList
	if opts.SplitSize > 0 {
		sw, err := archive.NewSplitWriter(filepath.Dir(opts.Path), filepath.Base(opts.Path), opts.SplitSize)
		if err != nil {
			return nil, err
		}
		if err := archive.Pack(ctx, dir, sw, compress, created); err != nil {
			sw.Abort()
			return nil, err
		}
		if pl, err = sw.Close(); err != nil {
			sw.Abort()
			return nil, err
		}
	} else {
		tmp := opts.Path + ".partial"
		f, err := os.Create(tmp)
		if err != nil {
			return nil, fmt.Errorf("creating %s: %w", opts.Path, err)
		}
		err = archive.Pack(ctx, dir, f, compress, created)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(tmp)
			return nil, err
		}
		if err := os.Rename(tmp, opts.Path); err != nil {
			return nil, fmt.Errorf("finishing %s: %w", opts.Path, err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("removing the staging directory %s: %w", dir, err)
	}
	return pl, nil
}

package mirror

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

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
		return nil, err
	}
	opts.Progress.Done()
	var entries []archive.IndexEntry
	for _, n := range g.Nodes {
		if err := lay.WriteBlob(n.Digest, n.Size, strings.NewReader(string(n.Raw))); err != nil {
			return nil, err
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
		return nil, err
	}
	if err := lay.WriteFile(archive.LockBundleFile, opts.LockBundle); err != nil {
		return nil, err
	}
	if len(opts.PublicKeyPEM) > 0 {
		if err := lay.WriteFile(archive.KeyFile, opts.PublicKeyPEM); err != nil {
			return nil, err
		}
	}
	if len(opts.TrustedRootJSON) > 0 {
		if err := lay.WriteFile(archive.TrustedRootFile, opts.TrustedRootJSON); err != nil {
			return nil, err
		}
	}
	if err := lay.Finish(ctx, entries); err != nil {
		return nil, err
	}
	res := &ExportResult{Path: opts.Path, Version: prep.Lock.Version, Manifests: len(g.Nodes), Blobs: len(blobs), Bytes: g.UniqueBytes(), Verification: prep.Verification}
	if !packed {
		return res, nil
	}
	opts.Progress.Phase("packing "+filepath.Base(opts.Path), 0, false)
	defer opts.Progress.Done()
	tmp := opts.Path + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", opts.Path, err)
	}
	err = archive.Pack(ctx, dir, f, strings.HasSuffix(opts.Path, ".zst"), prep.Lock.Created)
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
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("removing the staging directory %s: %w", dir, err)
	}
	return res, nil
}

// OpenedArchive is an archive unpacked (if needed) and checksum-verified.
type OpenedArchive struct {
	Layout     *archive.Layout
	LockJSON   []byte
	LockBundle []byte
	// PublicKeyPEM and TrustedRootJSON are the trusted material carried
	// in the archive, if any.
	PublicKeyPEM    []byte
	TrustedRootJSON []byte
	cleanup         func() error
}

// Close removes what OpenArchive unpacked.
func (a *OpenedArchive) Close() error {
	if a.cleanup != nil {
		return a.cleanup()
	}
	return nil
}

// OpenArchive unpacks a .tar/.tar.zst into a directory under workDir (or
// uses a layout directory as is) and verifies every checksum. Nothing is
// trusted yet: the caller verifies the lock and signatures next.
// Unpacking is bounded by default by the work directory's free space (see
// OpenArchiveLimited).
func OpenArchive(ctx context.Context, path, workDir string) (*OpenedArchive, error) {
	return OpenArchiveLimited(ctx, path, workDir, ArchiveLimits{})
}

// OpenArchiveLimited is OpenArchive with explicit bounds on unpacking.
func OpenArchiveLimited(ctx context.Context, path, workDir string, limits ArchiveLimits) (*OpenedArchive, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("opening archive: %w", err)
	}
	out := &OpenedArchive{}
	dir := path
	if !st.IsDir() {
		dir, err = os.MkdirTemp(workDir, "reloader-mirror-import-*")
		if err != nil {
			return nil, fmt.Errorf("creating a directory to unpack into: %w", err)
		}
		out.cleanup = func() error { return os.RemoveAll(dir) }
		f, err := os.Open(path)
		if err != nil {
			out.Close()
			return nil, fmt.Errorf("opening archive: %w", err)
		}
		uo, err := limits.unpackOptions(workDir)
		if err == nil {
			err = archive.Unpack(ctx, f, dir, uo)
		}
		f.Close()
		if err != nil {
			out.Close()
			return nil, fmt.Errorf("unpacking %s: %w", path, err)
		}
	}
	out.Layout = &archive.Layout{Dir: dir}
	if err := archive.VerifyChecksums(ctx, dir); err != nil {
		out.Close()
		return nil, fmt.Errorf("archive %s: %w", path, err)
	}
	read := func(name string, required bool) ([]byte, error) {
		b, err := out.Layout.ReadFile(name)
		if err != nil && (required || !errors.Is(err, fs.ErrNotExist)) {
			return nil, err
		}
		return b, nil
	}
	if out.LockJSON, err = read(archive.LockFile, true); err != nil {
		out.Close()
		return nil, err
	}
	if out.LockBundle, err = read(archive.LockBundleFile, true); err != nil {
		out.Close()
		return nil, err
	}
	out.PublicKeyPEM, _ = read(archive.KeyFile, false)
	out.TrustedRootJSON, _ = read(archive.TrustedRootFile, false)
	return out, nil
}

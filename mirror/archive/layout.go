package archive

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/reloader-dev/reloader/release"
)

// Layout is an OCI image layout directory holding a release.
type Layout struct {
	Dir string
	// Since is what Finish declares a delta archive is a delta against
	// (the base release's lock digest); empty for a full archive.
	Since string
}

func (l *Layout) blobPath(digest string) (string, error) {
	hexPart, ok := strings.CutPrefix(digest, "sha256:")
	if !ok || !blobName.MatchString("blobs/sha256/"+hexPart) {
		return "", fmt.Errorf("%q is not a sha256 digest", digest)
	}
	return filepath.Join(l.Dir, "blobs", "sha256", hexPart), nil
}

// HasBlob reports whether the blob is present with the given size.
func (l *Layout) HasBlob(digest string, size int64) bool {
	p, err := l.blobPath(digest)
	if err != nil {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && (size < 0 || st.Size() == size)
}

// WriteBlob streams r into the layout as digest, checking the content as it
// goes; it writes to a temporary name and renames, so an interrupted export
// never leaves a wrong blob under a digest (a re-run resumes from there).
func (l *Layout) WriteBlob(digest string, size int64, r io.Reader) error {
	p, err := l.blobPath(digest)
	if err != nil {
		return err
	}
	if l.HasBlob(digest, size) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("creating the blob directory: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".partial-*")
	if err != nil {
		return fmt.Errorf("writing blob %s: %w", digest, err)
	}
	defer os.Remove(f.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing blob %s: %w", digest, err)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != digest || (size >= 0 && n != size) {
		return fmt.Errorf("%w: blob %s: received %d bytes with digest %s", ErrInvalid, digest, n, got)
	}
	if err := os.Rename(f.Name(), p); err != nil {
		return fmt.Errorf("writing blob %s: %w", digest, err)
	}
	return nil
}

// WriteFile writes one of the archive's named files.
func (l *Layout) WriteFile(name string, data []byte) error {
	if err := ValidName(name, false); err != nil {
		return err
	}
	p := filepath.Join(l.Dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// ReadFile reads one of the archive's named files (not a blob), bounded.
func (l *Layout) ReadFile(name string) ([]byte, error) {
	if err := ValidName(name, false); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(l.Dir, filepath.FromSlash(name)))
	if err != nil {
		return nil, fmt.Errorf("reading %s from the archive: %w", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, release.MaxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s from the archive: %w", name, err)
	}
	if len(b) > release.MaxManifestBytes {
		return nil, fmt.Errorf("%s in the archive is larger than %d bytes", name, release.MaxManifestBytes)
	}
	return b, nil
}

// IndexEntry is one manifest listed in index.json.
type IndexEntry struct {
	MediaType    string            `json:"mediaType"`
	Digest       string            `json:"digest"`
	Size         int64             `json:"size"`
	ArtifactType string            `json:"artifactType,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
}

// Finish writes oci-layout and index.json, then the checksum manifest over
// every file in the directory.
func (l *Layout) Finish(ctx context.Context, entries []IndexEntry) error {
	if err := l.WriteFile(LayoutFile, []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	idx, err := json.MarshalIndent(struct {
		SchemaVersion int          `json:"schemaVersion"`
		MediaType     string       `json:"mediaType"`
		Manifests     []IndexEntry `json:"manifests"`
	}{2, string(types.OCIImageIndex), entries}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding index.json: %w", err)
	}
	if err := l.WriteFile(IndexFile, idx); err != nil {
		return err
	}
	files, err := listFiles(l.Dir)
	if err != nil {
		return err
	}
	sums := Checksums{}
	var total int64
	for _, f := range files {
		if f == ChecksumFile {
			continue
		}
		if err := ValidName(f, false); err != nil {
			return fmt.Errorf("export directory %s holds a stray file: %w", l.Dir, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		s, err := fileSHA256(filepath.Join(l.Dir, filepath.FromSlash(f)))
		if err != nil {
			return err
		}
		sums[f] = s
		st, err := os.Stat(filepath.Join(l.Dir, filepath.FromSlash(f)))
		if err != nil {
			return fmt.Errorf("sizing %s: %w", f, err)
		}
		total += st.Size()
	}
	return l.WriteFile(ChecksumFile, sums.MarshalDelta(total, l.Since))
}

// Manifest returns the manifest with this digest; repo does not matter in a
// layout, where content is addressed by digest alone.
func (l *Layout) Manifest(_ context.Context, _ string, digest string) ([]byte, error) {
	p, err := l.blobPath(digest)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("manifest %s is not in the archive: %w", digest, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, release.MaxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading manifest %s: %w", digest, err)
	}
	if len(b) > release.MaxManifestBytes {
		return nil, fmt.Errorf("manifest %s is larger than %d bytes", digest, release.MaxManifestBytes)
	}
	s := sha256.Sum256(b)
	if got := "sha256:" + hex.EncodeToString(s[:]); got != digest {
		return nil, fmt.Errorf("%w: archive manifest %s holds content with digest %s", ErrInvalid, digest, got)
	}
	return b, nil
}

// Blob opens a blob; the caller checks its digest while streaming.
func (l *Layout) Blob(_ context.Context, _ string, digest string) (io.ReadCloser, int64, error) {
	p, err := l.blobPath(digest)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, 0, fmt.Errorf("blob %s is not in the archive: %w", digest, fs.ErrNotExist)
		}
		return nil, 0, fmt.Errorf("opening blob %s: %w", digest, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

func (l *Layout) String() string { return "archive " + l.Dir }

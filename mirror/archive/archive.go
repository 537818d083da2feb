// Package archive holds a release on disk for the trip across an air gap: an
// OCI image layout (blobs/sha256/<hex>, index.json, oci-layout) in which every
// blob is stored once however many variants and platforms share it, plus the
// signed release lock, the trusted material to verify it, and a checksum
// manifest (checksums.sha256, in sha256sum's format so `sha256sum -c` works
// too) covering every other file. The layout can stay a directory or travel
// as one tar file, optionally zstd-compressed.
//
// Unpacking treats the archive as hostile: only the names above are
// accepted, never a link, a device or a path that leaves the directory, and
// sizes are bounded. The checksum manifest is an integrity check for the
// journey, not a trust anchor: trust comes from the lock's signature and the
// digests it pins, which the importer verifies next.
package archive

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/reloader-dev/reloader/release/trust"
)

// Names of the files an archive holds besides blobs.
const (
	LayoutFile      = "oci-layout"
	IndexFile       = "index.json"
	ChecksumFile    = "checksums.sha256"
	LockFile        = "reloader-release.json"
	LockBundleFile  = "reloader-release.json.sigstore.json"
	KeyFile         = "trust/cosign.pub"
	TrustedRootFile = "trust/trusted_root.json"
	// DeltaFile is in a delta archive only: what it omits (see Delta).
	DeltaFile = "delta.json"
)

var blobName = regexp.MustCompile(`^blobs/sha256/[a-f0-9]{64}$`)

// allowedFile reports whether name may appear in an archive.
func allowedFile(name string) bool {
	switch name {
	case LayoutFile, IndexFile, ChecksumFile, LockFile, LockBundleFile, KeyFile, TrustedRootFile, DeltaFile:
		return true
	}
	return blobName.MatchString(name)
}

func allowedDir(name string) bool {
	switch strings.TrimSuffix(name, "/") {
	case "blobs", "blobs/sha256", "trust":
		return true
	}
	return false
}

// ErrInvalid marks an archive that is not a well-formed release archive:
// a bad entry, a checksum mismatch, truncation. Callers treat it as
// tampering (it wraps trust.ErrUntrusted), not as an I/O failure.
var ErrInvalid = fmt.Errorf("%w: invalid release archive", trust.ErrUntrusted)

// ValidName checks an entry name is one an archive may hold. It rejects
// absolute paths, "..", backslashes and anything not in the layout.
func ValidName(name string, dir bool) error {
	if name == "" || strings.ContainsAny(name, "\\\x00") || strings.HasPrefix(name, "/") {
		return fmt.Errorf("%w: archive entry %q: not a relative path", ErrInvalid, name)
	}
	for _, part := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		if part == ".." || part == "." || part == "" {
			return fmt.Errorf("%w: archive entry %q: path escapes or is not clean", ErrInvalid, name)
		}
	}
	if dir {
		if !allowedDir(name) {
			return fmt.Errorf("%w: archive entry %q: unexpected directory", ErrInvalid, name)
		}
		return nil
	}
	if !allowedFile(name) {
		return fmt.Errorf("%w: archive entry %q: not part of a release archive", ErrInvalid, name)
	}
	return nil
}

// UnpackOptions bounds Unpack.
type UnpackOptions struct {
	// MaxBytes bounds the total bytes extracted (default DefaultMaxBytes;
	// DefaultLimits derives a bound from the free space of a directory).
	MaxBytes int64
	// MaxEntries bounds the number of entries (default DefaultMaxEntries).
	MaxEntries int
}

var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// Unpack extracts a tar (zstd-compressed or not: detected) into dir, which
// must be empty or absent. It stops at the first entry that is not plainly a
// file or directory of a release archive. The checksum manifest must be the
// first file: every later file must be listed in it, and the sizes it
// declares are checked against the bounds before anything else is written,
// so an archive that would not fit is refused before it fills the disk.
func Unpack(ctx context.Context, r io.Reader, dir string, opts UnpackOptions) error {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	br := bufio.NewReaderSize(r, 1<<20)
	head, _ := br.Peek(4)
	var src io.Reader = br
	if bytes.Equal(head, zstdMagic) {
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(1<<27))
		if err != nil {
			return fmt.Errorf("opening zstd stream: %w", err)
		}
		defer zr.Close()
		src = zr
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	tr := tar.NewReader(src)
	u := unpacker{dir: dir, maxBytes: opts.MaxBytes, maxEntries: opts.MaxEntries, seen: map[string]bool{}}
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if err == io.EOF {
			if n == 0 {
				return fmt.Errorf("%w: reading archive: no entries (empty or not a tar)", ErrInvalid)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: reading archive after %d entries (truncated or corrupt): %w", ErrInvalid, n, err)
		}
		if n >= u.maxEntries {
			return fmt.Errorf("%w: archive has more than %d entries (--max-entries)", ErrInvalid, u.maxEntries)
		}
		if err := u.entry(h, tr); err != nil {
			return err
		}
	}
}

// unpacker holds what Unpack has accounted for so far.
type unpacker struct {
	dir        string
	maxBytes   int64
	maxEntries int
	// total is the bytes extracted so far; limit what may be, at most
	// maxBytes and, once the manifest declared it, its size plus what it
	// declares.
	total, limit int64
	listed       Checksums
	seen         map[string]bool
}

func (u *unpacker) entry(h *tar.Header, r io.Reader) error {
	name := strings.TrimPrefix(h.Name, "./")
	switch h.Typeflag {
	case tar.TypeDir:
		if err := ValidName(name, true); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(u.dir, filepath.FromSlash(strings.TrimSuffix(name, "/"))), 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", name, err)
		}
		return nil
	case tar.TypeReg:
	default:
		return fmt.Errorf("%w: archive entry %q: type %q is not a regular file or directory", ErrInvalid, h.Name, h.Typeflag)
	}
	if err := ValidName(name, false); err != nil {
		return err
	}
	if u.seen[name] {
		return fmt.Errorf("%w: archive entry %q appears twice", ErrInvalid, name)
	}
	first := len(u.seen) == 0
	u.seen[name] = true
	switch {
	case first && name != ChecksumFile:
		return fmt.Errorf("%w: archive entry %q comes before %s, which must be the first file (reloader-mirror export writes it first)", ErrInvalid, name, ChecksumFile)
	case !first:
		if _, ok := u.listed[name]; !ok {
			return fmt.Errorf("%w: archive entry %q is not listed in %s", ErrInvalid, name, ChecksumFile)
		}
	}
	limit := u.maxBytes
	if u.limit > 0 {
		limit = u.limit
	}
	// Compared by subtraction: total+h.Size can wrap negative for a size
	// near MaxInt64 (a PAX header can carry one) and pass a sum check.
	if h.Size < 0 || h.Size > limit-u.total {
		return fmt.Errorf("%w: archive entry %q is %d bytes: extracting it would exceed %s", ErrInvalid, name, h.Size, u.bound())
	}
	if first {
		return u.manifest(h, r)
	}
	if err := u.write(name, io.LimitReader(r, h.Size)); err != nil {
		return err
	}
	u.total += h.Size
	return nil
}

// bound says which bound applies, for errors.
func (u *unpacker) bound() string {
	if u.limit > 0 && u.limit < u.maxBytes {
		return fmt.Sprintf("the %d bytes its %s declares", u.limit, ChecksumFile)
	}
	return fmt.Sprintf("the limit of %d bytes (--max-archive-size)", u.maxBytes)
}

// manifest reads the checksum manifest, checks what it declares against
// the bounds, and writes it.
func (u *unpacker) manifest(h *tar.Header, r io.Reader) error {
	if h.Size > maxManifestBytes {
		return fmt.Errorf("%w: %s is %d bytes, implausibly large", ErrInvalid, ChecksumFile, h.Size)
	}
	b, err := io.ReadAll(io.LimitReader(r, h.Size))
	if err != nil || int64(len(b)) != h.Size {
		return fmt.Errorf("%w: extracting %s (truncated archive?): %v", ErrInvalid, ChecksumFile, err)
	}
	c, d, declared, err := ParseManifest(b)
	if err != nil {
		return err
	}
	u.listed = c
	if declared {
		if d.Files+1 > u.maxEntries {
			return fmt.Errorf("%w: archive declares %d files, more than the %d entries allowed (--max-entries)", ErrInvalid, d.Files+1, u.maxEntries)
		}
		if d.Bytes > u.maxBytes-h.Size {
			return fmt.Errorf("%w: archive declares %d bytes, more than the limit of %d bytes (--max-archive-size; by default 90%% of the work directory's free space)", ErrInvalid, d.Bytes+h.Size, u.maxBytes)
		}
		u.limit = h.Size + d.Bytes
	}
	if err := u.write(ChecksumFile, bytes.NewReader(b)); err != nil {
		return err
	}
	u.total += h.Size
	return nil
}

func (u *unpacker) write(name string, r io.Reader) error {
	dst := filepath.Join(u.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("creating directory for %s: %w", name, err)
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("creating %s: %w", name, err)
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%w: extracting %s (truncated archive?): %w", ErrInvalid, name, err)
	}
	return nil
}

// Pack writes dir as a tar stream to w, zstd-compressed when compress is set.
// Entries are sorted with the checksum manifest first (so truncation shows
// as files it lists but the archive lacks), and stamped with mtime, so the
// same release packs to the same bytes.
func Pack(ctx context.Context, dir string, w io.Writer, compress bool, mtime time.Time) error {
	out := w
	var zw *zstd.Encoder
	if compress {
		var err error
		zw, err = zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(2))
		if err != nil {
			return fmt.Errorf("starting zstd: %w", err)
		}
		out = zw
	}
	files, err := listFiles(dir)
	if err != nil {
		return err
	}
	sort.SliceStable(files, func(i, j int) bool {
		if (files[i] == ChecksumFile) != (files[j] == ChecksumFile) {
			return files[i] == ChecksumFile
		}
		return files[i] < files[j]
	})
	tw := tar.NewWriter(out)
	for _, name := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := packFile(tw, dir, name, mtime); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("finishing the archive: %w", err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return fmt.Errorf("finishing zstd: %w", err)
		}
	}
	return nil
}

func packFile(tw *tar.Writer, dir, name string, mtime time.Time) error {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return fmt.Errorf("packing %s: %w", name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("packing %s: %w", name, err)
	}
	h := &tar.Header{Name: name, Mode: 0o644, Size: st.Size(), ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("packing %s: %w", name, err)
	}
	if _, err := io.Copy(tw, f); err != nil {
		return fmt.Errorf("packing %s: %w", name, err)
	}
	return nil
}

// listFiles returns the slash-separated names of the regular files in dir.
func listFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file", p)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	return files, nil
}

package mirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/reloader-dev/reloader/mirror/archive"
)

// OpenedArchive is an archive unpacked (if needed) and checksum-verified.
type OpenedArchive struct {
	Layout     *archive.Layout
	LockJSON   []byte
	LockBundle []byte
	// PublicKeyPEM and TrustedRootJSON are the trusted material carried
	// in the archive, if any.
	PublicKeyPEM    []byte
	TrustedRootJSON []byte
	// Delta is set when the archive is a delta: what it leaves out, which
	// the target must already hold (CheckDeltaBase).
	Delta   *archive.Delta
	cleanup func() error
}

// Close removes what OpenArchive unpacked.
func (a *OpenedArchive) Close() error {
	if a.cleanup != nil {
		return a.cleanup()
	}
	return nil
}

// OpenArchive opens what the user gave, the one way every command opens an
// archive: one archive (a .tar/.tar.zst unpacked into a directory under
// workDir, or a layout directory used as is), or the parts of a split
// archive, in any order, from the files and directories given (a part list
// among them, or in a directory given). Each part is checked against the
// part list's sha256 before the archive is read, and every checksum of the
// archive is verified. Nothing is trusted yet: the caller verifies the lock
// and signatures next. Unpacking is bounded by limits (zero: by the work
// directory's free space).
func OpenArchive(ctx context.Context, inputs []string, workDir string, limits ArchiveLimits) (*OpenedArchive, error) {
	if len(inputs) == 1 && !isSplit(inputs[0]) {
		return openOne(ctx, inputs[0], workDir, limits)
	}
	parts, err := archive.FindParts(ctx, inputs)
	if err != nil {
		return nil, err
	}
	return openStream(ctx, parts.List.Archive+" (parts)", parts.Open, workDir, limits)
}

// isSplit: a part list, or a directory that holds one and is not itself
// an unpacked layout.
func isSplit(path string) bool {
	if archive.IsPartList(path) {
		return true
	}
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return false
	}
	if _, err := os.Stat(filepath.Join(path, archive.ChecksumFile)); err == nil {
		return false
	}
	lists, _ := filepath.Glob(filepath.Join(path, "*"+archive.PartListSuffix))
	return len(lists) > 0
}

// openOne opens one archive file or layout directory.
func openOne(ctx context.Context, path, workDir string, limits ArchiveLimits) (*OpenedArchive, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("opening archive: %w", err)
	}
	if st.IsDir() {
		return openLayout(ctx, path, path, &OpenedArchive{})
	}
	return openStream(ctx, path, func() io.ReadCloser { return lazyFile(path) }, workDir, limits)
}

// openStream unpacks the archive open reads into a directory under
// workDir, then opens that layout.
func openStream(ctx context.Context, name string, open func() io.ReadCloser, workDir string, limits ArchiveLimits) (*OpenedArchive, error) {
	out := &OpenedArchive{}
	dir, err := os.MkdirTemp(workDir, "reloader-mirror-import-*")
	if err != nil {
		return nil, fmt.Errorf("creating a directory to unpack into: %w", err)
	}
	out.cleanup = func() error { return os.RemoveAll(dir) }
	r := open()
	uo, err := limits.unpackOptions(workDir)
	if err == nil {
		err = archive.Unpack(ctx, r, dir, uo)
	}
	r.Close()
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("unpacking %s: %w", name, err)
	}
	return openLayout(ctx, name, dir, out)
}

// lazyFile opens path on first read, so an open failure is a read error.
func lazyFile(path string) io.ReadCloser { return &fileReader{path: path} }

type fileReader struct {
	path string
	f    *os.File
}

func (r *fileReader) Read(p []byte) (int, error) {
	if r.f == nil {
		f, err := os.Open(r.path)
		if err != nil {
			return 0, fmt.Errorf("opening archive: %w", err)
		}
		r.f = f
	}
	return r.f.Read(p)
}

func (r *fileReader) Close() error {
	if r.f != nil {
		return r.f.Close()
	}
	return nil
}

// openLayout verifies the checksums of a layout directory and reads its
// named files.
func openLayout(ctx context.Context, path, dir string, out *OpenedArchive) (*OpenedArchive, error) {
	out.Layout = &archive.Layout{Dir: dir}
	declared, err := archive.VerifyChecksumsDeclared(ctx, dir)
	if err != nil {
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
	if out.Delta, err = readDelta(out.Layout, declared); err != nil {
		out.Close()
		return nil, fmt.Errorf("archive %s: %w", path, err)
	}
	return out, nil
}

// readDelta reads what a delta archive leaves out. The checksum manifest's
// declaration and the delta file must agree on the base release: one
// without the other is a damaged or altered archive.
func readDelta(l *archive.Layout, d archive.Declared) (*archive.Delta, error) {
	b, err := l.ReadFile(archive.DeltaFile)
	switch {
	case errors.Is(err, fs.ErrNotExist) && d.Since == "":
		return nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: the checksum manifest declares a delta against %s but there is no %s", archive.ErrInvalid, d.Since, archive.DeltaFile)
	case err != nil:
		return nil, err
	}
	delta, err := archive.ParseDelta(b)
	if err != nil {
		return nil, err
	}
	if delta.Since.LockDigest != d.Since {
		return nil, fmt.Errorf("%w: %s is a delta against lock %s, the checksum manifest declares %q", archive.ErrInvalid, archive.DeltaFile, delta.Since.LockDigest, d.Since)
	}
	return delta, nil
}

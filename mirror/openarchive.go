package mirror

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

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

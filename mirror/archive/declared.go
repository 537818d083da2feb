package archive

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The checksum manifest's first line may declare the size of what follows
// it. sha256sum skips lines starting with '#', so `sha256sum -c` still
// works; an importer reads it before extracting anything, so an archive
// that would not fit is refused before it fills the disk.
const declaredPrefix = "# reloader-archive "

// Declared is what a checksum manifest says about the files it lists.
type Declared struct {
	// Files is how many files the manifest lists, Bytes their total size
	// (the manifest itself not included).
	Files int
	Bytes int64
	// Since is set in a delta archive: the digest of the signed lock of
	// the release it is a delta against (see DeltaFile), which the target
	// must already hold.
	Since string
}

func (d Declared) fields() string {
	s := fmt.Sprintf("files=%d bytes=%d", d.Files, d.Bytes)
	if d.Since != "" {
		s += " since=" + d.Since
	}
	return s
}

func (d Declared) line() string { return declaredPrefix + d.fields() + "\n" }

// splitDeclared separates the declaration line, if the manifest starts
// with one, from the checksum lines. A manifest written before sizes were
// declared has none (ok false).
func splitDeclared(b []byte) (d Declared, ok bool, rest []byte, err error) {
	if !bytes.HasPrefix(b, []byte("#")) {
		return Declared{}, false, b, nil
	}
	line, rest, _ := bytes.Cut(b, []byte("\n"))
	fields, found := strings.CutPrefix(string(line), declaredPrefix)
	f := strings.Fields(fields)
	var files, size, since string
	if found && (len(f) == 2 || len(f) == 3) {
		files, _ = strings.CutPrefix(f[0], "files=")
		size, _ = strings.CutPrefix(f[1], "bytes=")
	}
	sinceOK := true
	if found && len(f) == 3 {
		since, sinceOK = strings.CutPrefix(f[2], "since=")
		sinceOK = sinceOK && validDigest(since)
	}
	n, err1 := strconv.Atoi(files)
	total, err2 := strconv.ParseInt(size, 10, 64)
	d = Declared{Files: n, Bytes: total, Since: since}
	// The line must be exactly what fields() writes: no sign, no leading
	// zero, no second spelling of the same declaration.
	if !found || !sinceOK || err1 != nil || err2 != nil || n < 0 || total < 0 || fields != d.fields() {
		return Declared{}, false, nil, fmt.Errorf("%w: checksum manifest line 1: not %q", ErrInvalid, declaredPrefix+"files=<n> bytes=<n> [since=sha256:<hex>]")
	}
	return d, true, rest, nil
}

// ParseManifest reads a checksum manifest and, if it has one, its
// declaration of sizes, which must agree with the number of files listed.
func ParseManifest(b []byte) (Checksums, Declared, bool, error) {
	d, ok, rest, err := splitDeclared(b)
	if err != nil {
		return nil, Declared{}, false, err
	}
	c, err := ParseChecksums(rest)
	if err != nil {
		return nil, Declared{}, false, err
	}
	if ok && d.Files != len(c) {
		return nil, Declared{}, false, fmt.Errorf("%w: checksum manifest declares %d files and lists %d", ErrInvalid, d.Files, len(c))
	}
	return c, d, ok, nil
}

// MarshalDeclared writes the manifest with its declaration of sizes first.
func (c Checksums) MarshalDeclared(totalBytes int64) []byte { return c.MarshalDelta(totalBytes, "") }

// MarshalDelta is MarshalDeclared also declaring, when since is set, the
// lock digest of the release a delta archive is against.
func (c Checksums) MarshalDelta(totalBytes int64, since string) []byte {
	return append([]byte(Declared{Files: len(c), Bytes: totalBytes, Since: since}.line()), c.Marshal()...)
}

// checkDeclaredSizes compares the declaration with the files of dir.
func checkDeclaredSizes(dir string, d Declared, names []string) error {
	var total int64
	for _, n := range names {
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(n)))
		if err != nil {
			return fmt.Errorf("%w: archive lacks %s: %w", ErrInvalid, n, err)
		}
		total += st.Size()
	}
	if total != d.Bytes {
		return fmt.Errorf("%w: archive files total %d bytes, its checksum manifest declares %d", ErrInvalid, total, d.Bytes)
	}
	return nil
}

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
}

func (d Declared) line() string {
	return fmt.Sprintf("%sfiles=%d bytes=%d\n", declaredPrefix, d.Files, d.Bytes)
}

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
	var files, size string
	if found && len(f) == 2 {
		files, _ = strings.CutPrefix(f[0], "files=")
		size, _ = strings.CutPrefix(f[1], "bytes=")
	}
	n, err1 := strconv.Atoi(files)
	total, err2 := strconv.ParseInt(size, 10, 64)
	if !found || err1 != nil || err2 != nil || n < 0 || total < 0 || fields != fmt.Sprintf("files=%d bytes=%d", n, total) {
		return Declared{}, false, nil, fmt.Errorf("%w: checksum manifest line 1: not %q", ErrInvalid, declaredPrefix+"files=<n> bytes=<n>")
	}
	return Declared{Files: n, Bytes: total}, true, rest, nil
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
func (c Checksums) MarshalDeclared(totalBytes int64) []byte {
	return append([]byte(Declared{Files: len(c), Bytes: totalBytes}.line()), c.Marshal()...)
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

package archive

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// An archive too large for the medium it travels on (a 650 MiB disc, a
// data diode's transfer limit) is written as numbered parts, NAME.part001,
// NAME.part002, …, and a part list, NAME.parts, in sha256sum's format:
//
//	# reloader-archive-parts archive=NAME parts=N bytes=TOTAL
//	<sha256>  NAME.part001
//	…
//
// The part list is not a trust anchor (the signed lock inside the archive
// is); it names the parts, in order, so they can arrive in any order and
// from several places, and detects a damaged or missing part before the
// archive is read.

// PartListSuffix ends the name of a part list.
const PartListSuffix = ".parts"

const partsPrefix = "# reloader-archive-parts "

// maxParts bounds the parts of one archive.
const maxParts = 99999

// maxPartListBytes bounds a part list: a line per part.
const maxPartListBytes = (maxParts + 1) * 256

// PartList is a parsed part list.
type PartList struct {
	// Archive is the name of the whole archive the parts make up.
	Archive string
	// Bytes is the size of the whole archive.
	Bytes int64
	// Parts are in order.
	Parts []Part
}

// Part is one part of a split archive.
type Part struct {
	Name   string
	SHA256 string
}

var archiveName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*\.tar(\.zst)?$`)

// PartName is the name of part i (1-based) of n of archive.
func PartName(archive string, i, n int) string {
	width := max(3, len(strconv.Itoa(n)))
	return fmt.Sprintf("%s.part%0*d", archive, width, i)
}

// Marshal writes the part list.
func (p *PartList) Marshal() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%sarchive=%s parts=%d bytes=%d\n", partsPrefix, p.Archive, len(p.Parts), p.Bytes)
	for _, part := range p.Parts {
		fmt.Fprintf(&b, "%s  %s\n", part.SHA256, part.Name)
	}
	return b.Bytes()
}

// ParsePartList reads a part list strictly: the header exactly as Marshal
// writes it, then one "<sha256>  <name>" line per part, named in order.
func ParsePartList(b []byte) (*PartList, error) {
	if len(b) > maxPartListBytes {
		return nil, fmt.Errorf("%w: part list is larger than %d bytes", ErrInvalid, maxPartListBytes)
	}
	if !bytes.HasSuffix(b, []byte("\n")) {
		return nil, fmt.Errorf("%w: part list does not end with a newline (truncated?)", ErrInvalid)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	head, ok := strings.CutPrefix(lines[0], partsPrefix)
	f := strings.Fields(head)
	if !ok || len(f) != 3 {
		return nil, fmt.Errorf("%w: part list line 1: not %q", ErrInvalid, partsPrefix+"archive=<name> parts=<n> bytes=<n>")
	}
	name, ok1 := strings.CutPrefix(f[0], "archive=")
	ns, ok2 := strings.CutPrefix(f[1], "parts=")
	bs, ok3 := strings.CutPrefix(f[2], "bytes=")
	n, err1 := strconv.Atoi(ns)
	total, err2 := strconv.ParseInt(bs, 10, 64)
	if !ok1 || !ok2 || !ok3 || err1 != nil || err2 != nil || n < 1 || n > maxParts || total < int64(n) {
		return nil, fmt.Errorf("%w: part list line 1: not %q with at least one part of at least one byte", ErrInvalid, partsPrefix+"archive=<name> parts=<n> bytes=<n>")
	}
	if !archiveName.MatchString(name) {
		return nil, fmt.Errorf("%w: part list line 1: %q is not an archive file name (NAME.tar or NAME.tar.zst)", ErrInvalid, name)
	}
	p := &PartList{Archive: name, Bytes: total}
	if lines[0] != partsPrefix+fmt.Sprintf("archive=%s parts=%d bytes=%d", name, n, total) {
		return nil, fmt.Errorf("%w: part list line 1: not in its one spelling %q", ErrInvalid, partsPrefix+"archive=<name> parts=<n> bytes=<n>")
	}
	if len(lines)-1 != n {
		return nil, fmt.Errorf("%w: part list declares %d parts and lists %d", ErrInvalid, n, len(lines)-1)
	}
	for i, line := range lines[1:] {
		sum, pn, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 || strings.Trim(sum, "0123456789abcdef") != "" {
			return nil, fmt.Errorf("%w: part list line %d: not \"<sha256>  <name>\"", ErrInvalid, i+2)
		}
		if want := PartName(name, i+1, n); pn != want {
			return nil, fmt.Errorf("%w: part list line %d: part %q, want %q", ErrInvalid, i+2, pn, want)
		}
		p.Parts = append(p.Parts, Part{Name: pn, SHA256: sum})
	}
	return p, nil
}

// SplitWriter writes a stream as parts of at most Size bytes in Dir and,
// on Close, the part list. Parts are written under a ".partial" name and
// renamed when complete, so a part with its final name is always whole.
type SplitWriter struct {
	dir, archive string
	size         int64
	cur          *os.File
	curName      string
	curN         int64
	h            hash.Hash
	total        int64
	sums         []string
}

// NewSplitWriter starts writing archive (a base name) as parts in dir.
func NewSplitWriter(dir, archive string, size int64) (*SplitWriter, error) {
	if !archiveName.MatchString(archive) {
		return nil, fmt.Errorf("%q is not an archive file name (NAME.tar or NAME.tar.zst)", archive)
	}
	if size <= 0 {
		return nil, errors.New("a part must hold at least one byte")
	}
	return &SplitWriter{dir: dir, archive: archive, size: size}, nil
}

func (w *SplitWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		if w.cur == nil {
			if len(w.sums) >= maxParts {
				return written, fmt.Errorf("the archive would need more than %d parts: choose a larger --split-size", maxParts)
			}
			// Named for its number only until the count is known.
			w.curName = filepath.Join(w.dir, fmt.Sprintf(".%s.%d.partial", w.archive, len(w.sums)+1))
			f, err := os.Create(w.curName)
			if err != nil {
				return written, fmt.Errorf("creating part %d: %w", len(w.sums)+1, err)
			}
			w.cur, w.curN, w.h = f, 0, sha256.New()
		}
		chunk := p
		if room := w.size - w.curN; int64(len(chunk)) > room {
			chunk = chunk[:room]
		}
		n, err := io.MultiWriter(w.cur, w.h).Write(chunk)
		written += n
		w.curN += int64(n)
		w.total += int64(n)
		p = p[n:]
		if err != nil {
			return written, fmt.Errorf("writing part %d: %w", len(w.sums)+1, err)
		}
		if w.curN == w.size {
			if err := w.endPart(); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}

func (w *SplitWriter) endPart() error {
	if err := w.cur.Close(); err != nil {
		return fmt.Errorf("writing part %d: %w", len(w.sums)+1, err)
	}
	w.sums = append(w.sums, hex.EncodeToString(w.h.Sum(nil)))
	w.cur = nil
	return nil
}

// Close ends the last part, gives every part its final name and writes
// the part list; it returns the list.
func (w *SplitWriter) Close() (*PartList, error) {
	if w.cur != nil {
		if err := w.endPart(); err != nil {
			return nil, err
		}
	}
	if len(w.sums) == 0 {
		return nil, errors.New("nothing was written to split")
	}
	pl := &PartList{Archive: w.archive, Bytes: w.total}
	for i, sum := range w.sums {
		name := PartName(w.archive, i+1, len(w.sums))
		if err := os.Rename(filepath.Join(w.dir, fmt.Sprintf(".%s.%d.partial", w.archive, i+1)), filepath.Join(w.dir, name)); err != nil {
			return nil, fmt.Errorf("finishing part %s: %w", name, err)
		}
		pl.Parts = append(pl.Parts, Part{Name: name, SHA256: sum})
	}
	if err := os.WriteFile(filepath.Join(w.dir, w.archive+PartListSuffix), pl.Marshal(), 0o644); err != nil {
		return nil, fmt.Errorf("writing the part list: %w", err)
	}
	return pl, nil
}

// Abort removes what was written.
func (w *SplitWriter) Abort() {
	if w.cur != nil {
		w.cur.Close()
	}
	for i := range len(w.sums) + 1 {
		os.Remove(filepath.Join(w.dir, fmt.Sprintf(".%s.%d.partial", w.archive, i+1)))
	}
}

// IsPartList reports whether path names a part list.
func IsPartList(path string) bool { return strings.HasSuffix(path, PartListSuffix) }

// FoundParts is a split archive whose parts were found and checked.
type FoundParts struct {
	List  *PartList
	Paths []string
}

// FindParts finds the parts of a split archive among inputs (files, or
// directories searched one level deep, in any order): exactly one part
// list, and each part it names, checked against its sha256 before use. A
// part found in several places is taken from the first copy that is whole.
// A missing or damaged part is named.
func FindParts(ctx context.Context, inputs []string) (*FoundParts, error) {
	var lists []string
	byName := map[string][]string{}
	for _, in := range inputs {
		st, err := os.Stat(in)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", in, err)
		}
		files := []string{in}
		if st.IsDir() {
			entries, err := os.ReadDir(in)
			if err != nil {
				return nil, fmt.Errorf("reading %s: %w", in, err)
			}
			files = files[:0]
			for _, e := range entries {
				if e.Type().IsRegular() {
					files = append(files, filepath.Join(in, e.Name()))
				}
			}
		}
		for _, f := range files {
			if IsPartList(f) {
				lists = append(lists, f)
			}
			byName[filepath.Base(f)] = append(byName[filepath.Base(f)], f)
		}
	}
	lists = dedupeSame(lists)
	switch {
	case len(lists) == 0:
		return nil, fmt.Errorf("no part list (NAME.tar.zst%s) among %s: give the directory or file that holds it", PartListSuffix, strings.Join(inputs, ", "))
	case len(lists) > 1:
		return nil, fmt.Errorf("more than one part list among %s (%s): give the parts of one archive", strings.Join(inputs, ", "), strings.Join(lists, ", "))
	}
	b, err := readBounded(lists[0], maxPartListBytes)
	if err != nil {
		return nil, err
	}
	pl, err := ParsePartList(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lists[0], err)
	}
	if filepath.Base(lists[0]) != pl.Archive+PartListSuffix {
		return nil, fmt.Errorf("%w: part list %s names archive %s", ErrInvalid, lists[0], pl.Archive)
	}
	out := &FoundParts{List: pl}
	var missing []string
	var total int64
	for _, p := range pl.Parts {
		candidates := byName[p.Name]
		if len(candidates) == 0 {
			missing = append(missing, p.Name)
			continue
		}
		var found string
		var damage []string
		for _, c := range dedupeSame(candidates) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			sum, n, err := sha256File(c)
			if err != nil {
				return nil, err
			}
			if sum == p.SHA256 {
				found = c
				total += n
				break
			}
			damage = append(damage, fmt.Sprintf("%s has sha256 %s", c, sum))
		}
		if found == "" {
			return nil, fmt.Errorf("%w: part %s is damaged: %s, the part list %s says %s", ErrInvalid, p.Name, strings.Join(damage, "; "), lists[0], p.SHA256)
		}
		out.Paths = append(out.Paths, found)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %d of the %d parts of %s are missing from %s: %s", ErrInvalid, len(missing), len(pl.Parts), pl.Archive, strings.Join(inputs, ", "), strings.Join(missing, ", "))
	}
	if total != pl.Bytes {
		return nil, fmt.Errorf("%w: the parts of %s hold %d bytes, the part list says %d", ErrInvalid, pl.Archive, total, pl.Bytes)
	}
	return out, nil
}

// Open returns the parts as one stream, in order.
func (f *FoundParts) Open() io.ReadCloser {
	return &partReader{paths: f.Paths}
}

type partReader struct {
	paths []string
	cur   *os.File
}

func (r *partReader) Read(p []byte) (int, error) {
	for {
		if r.cur == nil {
			if len(r.paths) == 0 {
				return 0, io.EOF
			}
			f, err := os.Open(r.paths[0])
			if err != nil {
				return 0, fmt.Errorf("reading part %s: %w", r.paths[0], err)
			}
			r.cur, r.paths = f, r.paths[1:]
		}
		n, err := r.cur.Read(p)
		if err == io.EOF {
			r.cur.Close()
			r.cur = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (r *partReader) Close() error {
	if r.cur != nil {
		return r.cur.Close()
	}
	return nil
}

// dedupeSame drops paths that name the same file twice (a directory and a
// file in it both given), keeping order.
func dedupeSame(paths []string) []string {
	var out []string
	var seen []os.FileInfo
next:
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			out = append(out, p)
			continue
		}
		for _, s := range seen {
			if os.SameFile(s, st) {
				continue next
			}
		}
		seen = append(seen, st)
		out = append(out, p)
	}
	return out
}

func readBounded(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(bufio.NewReader(f), limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrInvalid, p, limit)
	}
	return b, nil
}

func sha256File(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", 0, fmt.Errorf("part %s disappeared: %w", p, err)
		}
		return "", 0, fmt.Errorf("reading part %s: %w", p, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("reading part %s: %w", p, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

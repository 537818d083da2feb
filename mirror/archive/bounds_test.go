package archive

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// diskUse is what du reports for dir: allocated blocks, not apparent sizes.
func diskUse(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// bomb is a tar.zst writer: entries go through tw; raw writes to zw.
type bomb struct {
	buf bytes.Buffer
	zw  *zstd.Encoder
	tw  *tar.Writer
}

func newBomb(t *testing.T) *bomb {
	t.Helper()
	b := &bomb{}
	var err error
	if b.zw, err = zstd.NewWriter(&b.buf, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1)); err != nil {
		t.Fatal(err)
	}
	b.tw = tar.NewWriter(b.zw)
	return b
}

func (b *bomb) file(t *testing.T, name string, body []byte) {
	t.Helper()
	if err := b.tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.tw.Write(body); err != nil {
		t.Fatal(err)
	}
}

// zeroFile writes an entry of size zero bytes (highly compressible) with a
// header claiming headerSize.
func (b *bomb) zeroFile(t *testing.T, name string, headerSize, size int64) {
	t.Helper()
	if err := b.tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: headerSize, Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
		t.Fatal(err)
	}
	// An honest entry goes through tar.Writer; a lying one straight into
	// the compressed stream, which tar.Writer would refuse.
	var w io.Writer = b.zw
	if headerSize == size {
		w = b.tw
	}
	if _, err := io.CopyN(w, zeros{}, size); err != nil {
		t.Fatal(err)
	}
}

func (b *bomb) bytes(t *testing.T, finish bool) []byte {
	t.Helper()
	if finish {
		if err := b.tw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.buf.Bytes()
}

func blob(i int) string { return fmt.Sprintf("blobs/sha256/%064x", i) }

func manifest(declared *Declared, names ...string) []byte {
	c := Checksums{}
	for _, n := range names {
		c[n] = strings.Repeat("0", 64)
	}
	if declared != nil {
		return append([]byte(declared.line()), c.Marshal()...)
	}
	return c.Marshal()
}

// unpackBounded unpacks data and checks the refusal: fast, naming the
// reason, as tampering (ErrInvalid), and with disk use under maxDisk.
func unpackBounded(t *testing.T, data []byte, opts UnpackOptions, want string, maxDisk int64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "in")
	start := time.Now()
	err := Unpack(context.Background(), bytes.NewReader(data), dir, opts)
	took := time.Since(start)
	used := diskUse(t, dir)
	t.Logf("%d-byte archive refused in %s, %d bytes on disk: %v", len(data), took.Round(time.Millisecond), used, err)
	if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want an invalid-archive error saying %q", err, want)
	}
	if used > maxDisk {
		t.Errorf("unpacking wrote %d bytes before refusing, more than %d", used, maxDisk)
	}
	if took > 20*time.Second {
		t.Errorf("refusing took %s", took)
	}
}

// A PAX header can carry a size near MaxInt64, which wraps a
// total+size > max check negative; the entry is refused from its header,
// before anything of it is written.
func TestAPAXSizeNearMaxInt64IsRefusedBeforeWriting(t *testing.T) {
	for _, size := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 600} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			b := newBomb(t)
			b.file(t, ChecksumFile, manifest(nil, LockFile, blob(1)))
			b.file(t, LockFile, []byte("{}"))
			b.zeroFile(t, blob(1), size, 64<<20)
			unpackBounded(t, b.bytes(t, false), UnpackOptions{MaxBytes: 1 << 30}, "would exceed the limit of 1073741824 bytes", 1<<20)
		})
	}
}

// A zstd bomb (a small archive of an entry that decompresses to much) is
// refused before it is written: from what the checksum manifest declares
// when that is over the bound, or when an entry is bigger than the
// manifest declared, from the entry's header.
func TestAZstdBombIsRefusedBeforeItFillsTheDisk(t *testing.T) {
	const huge = 128 << 20
	t.Run("declared larger than the bound", func(t *testing.T) {
		b := newBomb(t)
		b.file(t, ChecksumFile, manifest(&Declared{Files: 1, Bytes: huge}, blob(1)))
		b.zeroFile(t, blob(1), huge, huge)
		unpackBounded(t, b.bytes(t, true), UnpackOptions{MaxBytes: 16 << 20}, "more than the limit of 16777216 bytes", 1<<20)
	})
	t.Run("larger than declared", func(t *testing.T) {
		b := newBomb(t)
		b.file(t, ChecksumFile, manifest(&Declared{Files: 1, Bytes: 10}, blob(1)))
		b.zeroFile(t, blob(1), huge, huge)
		unpackBounded(t, b.bytes(t, true), UnpackOptions{MaxBytes: 1 << 30}, "declares", 1<<20)
	})
	t.Run("an old manifest, larger than the bound", func(t *testing.T) {
		b := newBomb(t)
		b.file(t, ChecksumFile, manifest(nil, blob(1)))
		b.zeroFile(t, blob(1), huge, huge)
		unpackBounded(t, b.bytes(t, true), UnpackOptions{MaxBytes: 16 << 20}, "would exceed the limit of 16777216 bytes", 1<<20)
	})
}

// An archive with more entries than allowed is refused: at once when its
// manifest declares them, otherwise at the first entry too many.
func TestTooManyEntriesAreRefused(t *testing.T) {
	var names []string
	for i := range 200 {
		names = append(names, blob(i))
	}
	build := func(d *Declared) []byte {
		b := newBomb(t)
		b.file(t, ChecksumFile, manifest(d, names...))
		for _, n := range names {
			b.file(t, n, []byte("x"))
		}
		return b.bytes(t, true)
	}
	t.Run("declared", func(t *testing.T) {
		unpackBounded(t, build(&Declared{Files: 200, Bytes: 200}), UnpackOptions{MaxEntries: 50}, "declares 201 files, more than the 50 entries allowed", 64<<10)
	})
	t.Run("counted", func(t *testing.T) {
		unpackBounded(t, build(nil), UnpackOptions{MaxEntries: 50}, "more than 50 entries", 1<<20)
	})
}

// The checksum manifest comes first and lists every file: a file before it
// or not listed in it is refused as it arrives.
func TestTheChecksumManifestComesFirstAndListsEveryFile(t *testing.T) {
	b := newBomb(t)
	b.file(t, LockFile, []byte("{}"))
	b.file(t, ChecksumFile, manifest(nil, LockFile))
	unpackBounded(t, b.bytes(t, true), UnpackOptions{}, "must be the first file", 64<<10)

	b = newBomb(t)
	b.file(t, ChecksumFile, manifest(nil, LockFile))
	b.file(t, IndexFile, []byte("{}"))
	unpackBounded(t, b.bytes(t, true), UnpackOptions{}, "is not listed in checksums.sha256", 64<<10)
}

// What Pack writes declares its sizes, unpacks within the bounds and
// verifies; a declaration that does not match the files is refused.
func TestAPackedLayoutDeclaresItsSizeAndUnpacks(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	l := &Layout{Dir: src}
	if err := l.WriteFile(LockFile, []byte(`{"version":"v1"}`)); err != nil {
		t.Fatal(err)
	}
	if err := l.Finish(ctx, nil); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(src, ChecksumFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(sums), "# reloader-archive files=3 bytes=") {
		t.Fatalf("manifest does not declare its size:\n%s", sums)
	}
	var packed bytes.Buffer
	if err := Pack(ctx, src, &packed, true, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "in")
	if err := Unpack(ctx, bytes.NewReader(packed.Bytes()), dir, UnpackOptions{MaxBytes: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if err := VerifyChecksums(ctx, dir); err != nil {
		t.Fatal(err)
	}
	lied := strings.Replace(string(sums), "bytes=", "bytes=1", 1)
	if err := os.WriteFile(filepath.Join(dir, ChecksumFile), []byte(lied), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := VerifyChecksums(ctx, dir); err == nil || !strings.Contains(err.Error(), "its checksum manifest declares") {
		t.Fatalf("a wrong declaration: %v", err)
	}
}

// By default unpacking may use at most 90% of the free space where it
// unpacks, and never more than DefaultMaxBytes.
func TestTheDefaultBoundIsDerivedFromFreeSpace(t *testing.T) {
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	opts, err := DefaultLimits(dir)
	if err != nil {
		t.Fatal(err)
	}
	if opts.MaxBytes > DefaultMaxBytes || opts.MaxBytes > free/10*9+int64(st.Bsize) || opts.MaxEntries != DefaultMaxEntries {
		t.Fatalf("limits %+v with %d bytes free", opts, free)
	}
	if _, err := DefaultLimits(filepath.Join(dir, "absent")); err == nil {
		t.Fatal("no error for a directory that does not exist")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"1024": 1024, "512MiB": 512 << 20, "20GiB": 20 << 30, "1TiB": 1 << 40, "10GB": 10e9, "7k": 7 << 10, " 3 MiB ": 3 << 20} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5GiB", "GiB", "10PiB", "9223372036854775807KiB", "99999999999999999999"} {
		if n, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, n)
		}
	}
}

// FuzzParseSize: a size that parses is never negative.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1", "20GiB", "9223372036854775807", "8EiB", "-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseSize(s); err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
	})
}

// FuzzParseManifest: a manifest that parses declares as many files as it
// lists, and marshals back to one that parses the same.
func FuzzParseManifest(f *testing.F) {
	f.Add(manifest(&Declared{Files: 1, Bytes: 3}, LockFile))
	f.Add(manifest(nil, LockFile))
	f.Add([]byte("# reloader-archive files=-1 bytes=9223372036854775808\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, d, ok, err := ParseManifest(data)
		if err != nil {
			return
		}
		if ok && (d.Files != len(c) || d.Bytes < 0) {
			t.Fatalf("declared %+v for %d files", d, len(c))
		}
		c2, d2, ok2, err := ParseManifest(c.MarshalDeclared(d.Bytes))
		if err != nil || !ok2 || len(c2) != len(c) || d2.Bytes != d.Bytes {
			t.Fatalf("round trip: %v", err)
		}
	})
}

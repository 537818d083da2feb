package main

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror/archive"
)

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// writeBomb writes a small .tar.zst whose one blob unpacks to size bytes of
// zeros, with an honest checksum manifest first (as export writes it).
func writeBomb(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw, err := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	name := "blobs/sha256/" + strings.Repeat("ab", 32)
	sums := archive.Checksums{name: strings.Repeat("0", 64)}.MarshalDeclared(size)
	for _, e := range []struct {
		name string
		size int64
		body io.Reader
	}{{archive.ChecksumFile, int64(len(sums)), strings.NewReader(string(sums))}, {name, size, zeroReader{}}} {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Mode: 0o644, Size: e.size, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.CopyN(tw, e.body, e.size); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// Every command that reads an archive takes --max-archive-size and
// --max-entries, and refuses (exit 3) an archive over them before unpacking
// it, leaving nothing in the work directory; a size it cannot read is a
// usage error.
func TestEveryCommandThatReadsAnArchiveRefusesOneOverItsBounds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.tar.zst")
	writeBomb(t, bomb, 64<<20)
	st, _ := os.Stat(bomb)
	t.Logf("a %d-byte archive that unpacks to 64 MiB", st.Size())
	for _, cmd := range [][]string{{"plan"}, {"verify"}, {"values", "--target", "127.0.0.1:1/x"}, {"policy", "--target", "127.0.0.1:1/x"},
		{"import", "--target", "127.0.0.1:1/x"}, {"review", "--out", dir}} {
		for _, limit := range [][]string{{"--max-archive-size", "16MiB"}, {"--max-entries", "1"}} {
			t.Run(cmd[0]+" "+limit[0], func(t *testing.T) {
				work := t.TempDir()
				args := append(append(append([]string{}, cmd...), "-f", bomb, "--key", filepath.Join(dir, "absent.pub"), "--work-dir", work), limit...)
				code, stdout, stderr := runCLI(t, args...)
				want := map[string]string{"--max-archive-size": "more than the limit of 16777216 bytes", "--max-entries": "more than the 1 entries allowed"}[limit[0]]
				if code != cli.ExitRefused || !strings.Contains(stderr, want) {
					t.Fatalf("exit %d, want %d saying %q\n%s\n%s", code, cli.ExitRefused, want, stdout, stderr)
				}
				if left, _ := os.ReadDir(work); len(left) != 0 {
					t.Errorf("the work directory keeps %d entries after the refusal", len(left))
				}
			})
		}
	}
	if code, _, stderr := runCLI(t, "verify", "-f", bomb, "--key", "k.pub", "--max-archive-size", "lots"); code != cli.ExitUsage || !strings.Contains(stderr, "max-archive-size") {
		t.Fatalf("an unreadable size: exit %d\n%s", code, stderr)
	}
}

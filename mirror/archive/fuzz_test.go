package archive

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tarOf(entries map[string]string) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for n, body := range entries {
		_ = tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		_, _ = tw.Write([]byte(body))
	}
	_ = tw.Close()
	return b.Bytes()
}

// FuzzUnpack: whatever the bytes, Unpack never panics and never writes a
// file outside its directory.
func FuzzUnpack(f *testing.F) {
	f.Add(tarOf(map[string]string{LockFile: "{}", ChecksumFile: ""}))
	f.Add(tarOf(map[string]string{"../escape": "x"}))
	f.Add(tarOf(map[string]string{"blobs/sha256/" + strings.Repeat("a", 64): "x"}))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		dir := filepath.Join(root, "in")
		_ = Unpack(context.Background(), bytes.NewReader(data), dir, UnpackOptions{MaxBytes: 1 << 20, MaxEntries: 100})
		entries, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "in" {
				t.Fatalf("Unpack wrote %s outside its directory", e.Name())
			}
		}
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type()&os.ModeSymlink != 0 {
				t.Fatalf("Unpack created a symlink %s", p)
			}
			return nil
		})
	})
}

// FuzzParseChecksums: a manifest that parses only names archive files and
// marshals back to an equivalent manifest.
func FuzzParseChecksums(f *testing.F) {
	f.Add([]byte(strings.Repeat("a", 64) + "  " + LockFile + "\n"))
	f.Add([]byte(strings.Repeat("a", 64) + "  ../x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseChecksums(data)
		if err != nil {
			return
		}
		for n := range c {
			if ValidName(n, false) != nil {
				t.Fatalf("accepted name %q", n)
			}
		}
		again, err := ParseChecksums(c.Marshal())
		if err != nil || len(again) != len(c) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func TestValidNameRejectsEscapes(t *testing.T) {
	for _, n := range []string{"../x", "/etc/passwd", "blobs/../index.json", "blobs\\sha256", "trust/../../x", "./index.json/.", ""} {
		if ValidName(n, false) == nil {
			t.Errorf("ValidName(%q) accepted", n)
		}
	}
	for _, n := range []string{IndexFile, LockFile, "blobs/sha256/" + strings.Repeat("0", 64)} {
		if err := ValidName(n, false); err != nil {
			t.Errorf("ValidName(%q): %v", n, err)
		}
	}
}

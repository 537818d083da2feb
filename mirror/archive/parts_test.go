package archive

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParsePartList: a part list that parses names its parts in order, as
// the exporter names them, and writes back byte for byte.
func FuzzParsePartList(f *testing.F) {
	pl := &PartList{Archive: "reloader-v1.2.3.tar.zst", Bytes: 10, Parts: []Part{
		{Name: PartName("reloader-v1.2.3.tar.zst", 1, 2), SHA256: strings.Repeat("a", 64)},
		{Name: PartName("reloader-v1.2.3.tar.zst", 2, 2), SHA256: strings.Repeat("b", 64)}}}
	f.Add(pl.Marshal())
	f.Add([]byte("# reloader-archive-parts archive=../x.tar parts=1 bytes=1\n" + strings.Repeat("a", 64) + "  ../x.tar.part001\n"))
	f.Add([]byte("# reloader-archive-parts archive=x.tar parts=01 bytes=1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pl, err := ParsePartList(data)
		if err != nil {
			return
		}
		for i, p := range pl.Parts {
			if p.Name != PartName(pl.Archive, i+1, len(pl.Parts)) || strings.ContainsAny(p.Name, "/\\") {
				t.Fatalf("accepted part name %q", p.Name)
			}
		}
		if !bytes.Equal(pl.Marshal(), data) {
			t.Fatalf("%q parsed and wrote back as %q", data, pl.Marshal())
		}
	})
}

// Whatever the part size, the parts joined are the archive, none larger
// than the size asked for.
func TestSplitWriterPartsJoinToTheArchive(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1000)
	for _, size := range []int64{1 << 20, 16000, 16001, 1000, 7} {
		dir := t.TempDir()
		w, err := NewSplitWriter(dir, "r.tar", size)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		pl, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		if want := (int64(len(data)) + size - 1) / size; int64(len(pl.Parts)) != want {
			t.Errorf("size %d: %d parts, want %d", size, len(pl.Parts), want)
		}
		found, err := FindParts(context.Background(), []string{dir})
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		for _, p := range found.Paths {
			if st, _ := os.Stat(p); st.Size() > size {
				t.Errorf("part %s: %d bytes, more than %d", p, st.Size(), size)
			}
		}
		rc := found.Open()
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d: the parts do not join to the archive (%v)", size, err)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".*partial")); len(left) > 0 {
			t.Errorf("left %v", left)
		}
	}
}

package archive

import (
	"strings"
	"testing"
)

var someDigest = "sha256:" + strings.Repeat("ab", 32)

// FuzzParseDelta: a delta file that parses names sha256 digests and plain
// repositories only, and encodes back to the same delta.
func FuzzParseDelta(f *testing.F) {
	d := Delta{Since: DeltaBase{Version: "v1.2.3", LockDigest: someDigest},
		Manifests: []Omitted{{Repository: "127.0.0.1:5000/reloader-dev/reloader", Digest: someDigest, Size: 10}},
		Blobs:     []Omitted{{Repository: "ghcr.io/reloader-dev/reloader", Digest: someDigest, Size: 0}}}
	b, _ := d.Marshal()
	f.Add(b)
	f.Add([]byte(`{"since":{"version":"v1","lockDigest":"sha256:00"},"manifests":[],"blobs":[]}`))
	f.Add([]byte(`{"since":{"version":"v1","lockDigest":"` + someDigest + `"},"blobs":[{"repository":"a b","digest":"` + someDigest + `"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseDelta(data)
		if err != nil {
			return
		}
		for _, o := range append(append([]Omitted(nil), d.Manifests...), d.Blobs...) {
			if !validDigest(o.Digest) || o.Size < 0 || o.Repository == "" || strings.ContainsAny(o.Repository, " \n@") {
				t.Fatalf("accepted %+v", o)
			}
		}
		b, err := d.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseDelta(b); err != nil {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// FuzzDeclared: a declaration line that parses is exactly the line the
// exporter writes for what it declares.
func FuzzDeclared(f *testing.F) {
	f.Add([]byte(Declared{Files: 3, Bytes: 10}.line()))
	f.Add([]byte(Declared{Files: 3, Bytes: 10, Since: someDigest}.line()))
	f.Add([]byte("# reloader-archive files=1 bytes=01\n"))
	f.Add([]byte("# reloader-archive files=1 bytes=1 since=sha256:zz\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, ok, rest, err := splitDeclared(data)
		if err != nil || !ok {
			return
		}
		if d.Since != "" && !validDigest(d.Since) {
			t.Fatalf("accepted since %q", d.Since)
		}
		if got := d.line() + string(rest); !strings.HasPrefix(string(data), d.line()) || len(got) != len(data) {
			t.Fatalf("%q parsed as %+v, which writes %q", data, d, d.line())
		}
	})
}

func TestADeltaDeclaresItsBase(t *testing.T) {
	b := Checksums{LockFile: strings.Repeat("a", 64)}.MarshalDelta(5, someDigest)
	_, d, ok, err := ParseManifest(b)
	if err != nil || !ok || d.Since != someDigest || d.Bytes != 5 {
		t.Fatalf("ParseManifest(%q) = %+v, %v, %v", b, d, ok, err)
	}
	for _, bad := range []string{"since=sha256:" + strings.Repeat("A", 64), "since=", "since=" + someDigest + " x=1"} {
		if _, _, _, err := ParseManifest([]byte("# reloader-archive files=0 bytes=0 " + bad + "\n")); err == nil {
			t.Errorf("accepted declaration %q", bad)
		}
	}
}

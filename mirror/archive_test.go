package mirror_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/archive"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

func export(t *testing.T, f fixture, path string) {
	t.Helper()
	ctx := context.Background()
	v, err := trust.NewVerifier(f.policy)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := mirror.Verify(ctx, &mirror.RegistrySource{Client: newClient(t)}, f.rel.LockJSON, f.rel.LockBundle, v)
	if err != nil {
		t.Fatal(err)
	}
	_, err = rel.Export(ctx, mirror.ExportOptions{PublicKeyPEM: f.signer.PublicKeyPEM(), Path: path})
	if err != nil {
		t.Fatal(err)
	}
}

func importArchive(t *testing.T, f fixture, path, target string) (*mirror.Receipt, error) {
	t.Helper()
	ctx := context.Background()
	a, err := mirror.OpenArchive(ctx, []string{path}, t.TempDir(), mirror.ArchiveLimits{})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	opts := f.options(t, target)
	opts.Source, opts.LockJSON, opts.LockBundle = a.Layout, a.LockJSON, a.LockBundle
	return copyRelease(ctx, opts)
}

func TestExportImportRoundTripPreservesEveryDigest(t *testing.T) {
	f := publish(t, nil)
	for _, name := range []string{"release.tar", "release.tar.zst"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			export(t, f, path)
			dst := startInProcess(t, nil)
			target := dst.Host + "/airgap"
			rc, err := importArchive(t, f, path, target)
			if err != nil {
				t.Fatal(err)
			}
			assertMirrored(t, f, target, rc)
		})
	}
}

func TestExportStoresSharedBlobsOnce(t *testing.T) {
	f := publish(t, nil)
	dir := filepath.Join(t.TempDir(), "layout")
	export(t, f, dir)
	entries, err := os.ReadDir(filepath.Join(dir, "blobs", "sha256"))
	if err != nil {
		t.Fatal(err)
	}
	// Every platform image of both variants shares one base layer; a
	// per-repository copy would hold it five times.
	g, err := mirror.BuildGraph(context.Background(), f.rel.Lock, &mirror.RegistrySource{Client: newClient(t)})
	if err != nil {
		t.Fatal(err)
	}
	distinct := map[string]bool{}
	for _, n := range g.Nodes {
		distinct[n.Digest] = true
		for _, b := range n.Blobs {
			distinct[b.Digest] = true
		}
	}
	if len(entries) != len(distinct) {
		t.Errorf("layout holds %d blobs, the release has %d distinct", len(entries), len(distinct))
	}
	if err := archive.VerifyChecksums(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
}

// rewriteTar copies the tar at src to dst, letting edit change each entry's
// name and body (returning false drops the entry).
func rewriteTar(t *testing.T, src, dst string, edit func(h *tar.Header, body []byte) ([]byte, bool)) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out bytes.Buffer
	tr, tw := tar.NewReader(in), tar.NewWriter(&out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		body, keep := edit(h, body)
		if !keep {
			continue
		}
		h.Size = int64(len(body))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(body)
	}
	_ = tw.Close()
	if err := os.WriteFile(dst, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestImportRejectsABadArchiveBeforePushingAnything(t *testing.T) {
	f := publish(t, nil)
	good := filepath.Join(t.TempDir(), "release.tar")
	export(t, f, good)
	st, err := os.Stat(good)
	if err != nil {
		t.Fatal(err)
	}
	firstLayer := lastLayer(t, f.rel.Lock.Find(release.KindImage, "reloader")[0])
	cases := []struct {
		name string
		make func(dst string)
		want string
	}{
		{"a truncated archive", func(dst string) {
			b, _ := os.ReadFile(good)
			_ = os.WriteFile(dst, b[:st.Size()/2], 0o644)
		}, "truncated"},
		{"an entry with ../ in its path", func(dst string) {
			rewriteTar(t, good, dst, func(h *tar.Header, b []byte) ([]byte, bool) {
				if h.Name == archive.LockFile {
					h.Name = "../" + archive.LockFile
				}
				return b, true
			})
		}, "escapes"},
		{"a checksum manifest that disagrees", func(dst string) {
			rewriteTar(t, good, dst, func(h *tar.Header, b []byte) ([]byte, bool) {
				if h.Name == archive.ChecksumFile {
					b = bytes.Replace(b, []byte("0"), []byte("1"), 1)
				}
				return b, true
			})
		}, "checksum manifest"},
		{"a flipped byte in a blob", func(dst string) {
			rewriteTar(t, good, dst, func(h *tar.Header, b []byte) ([]byte, bool) {
				if h.Name == "blobs/sha256/"+strings.TrimPrefix(firstLayer, "sha256:") {
					b[0] ^= 1
				}
				return b, true
			})
		}, "sha256"},
		{"a blob left out", func(dst string) {
			rewriteTar(t, good, dst, func(h *tar.Header, b []byte) ([]byte, bool) {
				return b, h.Name != "blobs/sha256/"+strings.TrimPrefix(firstLayer, "sha256:")
			})
		}, "lacks"},
		{"a smuggled file", func(dst string) {
			rewriteTar(t, good, dst, func(h *tar.Header, b []byte) ([]byte, bool) {
				if h.Name == archive.KeyFile {
					h.Name = "trust/evil.pub"
				}
				return b, true
			})
		}, "not part of a release archive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(t.TempDir(), "bad.tar")
			tc.make(bad)
			var ch countingHandler
			dst := startInProcess(t, ch.wrap)
			_, err := importArchive(t, f, bad, dst.Host+"/airgap")
			if err == nil {
				t.Fatal("bad archive was imported")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if n := ch.count(); n != 0 {
				t.Errorf("%d writes reached the target: %v", n, ch.writes)
			}
		})
	}
}

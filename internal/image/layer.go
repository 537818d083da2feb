// Package image assembles the controller's container images with
// go-containerregistry, without Docker: the standard variant from scratch,
// the UBI variant on a base image pinned by digest. Everything that could
// vary between two builds of one commit (file times, owners, entry order,
// compression, config timestamps) is fixed, so the digests repeat.
package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/pem"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// File is one regular file of a layer.
type File struct {
	// Path is absolute inside the image, e.g. "/etc/passwd".
	Path string
	Mode int64
	Data []byte
}

// Layer builds a gzip-compressed OCI layer holding files (and their parent
// directories), owned by root, all stamped with mtime.
func Layer(files []File, mtime time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	dirs := map[string]bool{}
	for _, f := range sorted {
		name := strings.TrimPrefix(path.Clean(f.Path), "/")
		if name == "" || name == "." || strings.HasPrefix(name, "..") {
			return nil, fmt.Errorf("building a layer: bad path %q", f.Path)
		}
		// Parent directories first, each once, so unpackers never invent
		// them with their own (time-dependent) metadata.
		var parents []string
		for d := path.Dir(name); d != "."; d = path.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(header(d+"/", tar.TypeDir, 0o755, 0, mtime)); err != nil {
				return nil, fmt.Errorf("building a layer: directory %s: %w", d, err)
			}
		}
		if err := tw.WriteHeader(header(name, tar.TypeReg, f.Mode, int64(len(f.Data)), mtime)); err != nil {
			return nil, fmt.Errorf("building a layer: %s: %w", name, err)
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, fmt.Errorf("building a layer: %s: %w", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("building a layer: %w", err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithCompressionLevel(gzip.BestCompression), tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("building a layer: %w", err)
	}
	// A layer from uncompressed bytes is compressed again on every read
	// (the OCI layout, the push, digests): at BestCompression that is most
	// of a release's time. Compress once and keep the bytes; the digest is
	// of these same bytes.
	rc, err := l.Compressed()
	if err != nil {
		return nil, fmt.Errorf("building a layer: %w", err)
	}
	defer rc.Close()
	gz, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("building a layer: %w", err)
	}
	cl, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gz)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("building a layer: %w", err)
	}
	return cl, nil
}

func header(name string, typ byte, mode, size int64, mtime time.Time) *tar.Header {
	return &tar.Header{
		Typeflag: typ, Name: name, Mode: mode, Size: size,
		ModTime: mtime.UTC(), Uid: 0, Gid: 0, Uname: "", Gname: "",
		Format: tar.FormatPAX,
	}
}

// CABundle is the PEM bundle of the Mozilla NSS roots vendored with
// golang.org/x/crypto/x509roots/fallback: a pinned module version, not the
// build machine's /etc/ssl, so two builds ship the same roots. Roots with
// an NSS constraint (distrust-after) are left out, since a PEM file cannot
// carry the constraint and trusting them unconditionally would widen trust.
func CABundle() []byte {
	var b bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})
	}
	return b.Bytes()
}

// Nonroot user the controller runs as, in both variants.
const (
	NonrootUID  = 65534
	NonrootUser = "65534:65534"
)

// RootFSFiles are the files a scratch image needs besides the binary: a
// passwd/group entry for the nonroot user (so tools resolve the name) and
// the CA roots.
func RootFSFiles() []File {
	return []File{
		{Path: "/etc/passwd", Mode: 0o644, Data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n")},
		{Path: "/etc/group", Mode: 0o644, Data: []byte("root:x:0:\nnobody:x:65534:\n")},
		{Path: "/etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Data: CABundle()},
	}
}

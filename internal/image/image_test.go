package image

import (
	"archive/tar"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var meta = Metadata{Name: "reloader", Version: "v1.2.3", Commit: strings.Repeat("ab", 20), Source: "https://github.com/reloader-dev/reloader",
	Licenses: "Apache-2.0", Vendor: "Reloader contributors", Summary: "summary", Description: "description",
	Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}

var amd64 = v1.Platform{OS: "linux", Architecture: "amd64"}

func content() Content {
	return Content{Platform: amd64, Binary: []byte("\x7fELF pretend binary"), BinaryPath: "/reloader",
		Licenses: []File{{Path: "/licenses/LICENSE", Mode: 0o644, Data: []byte("license text")}}}
}

func files(t *testing.T, img v1.Image) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !h.ModTime.Equal(meta.Created) || h.Uid != 0 || h.Gid != 0 {
				t.Errorf("%s: mtime %s uid %d gid %d, want the release time and root", h.Name, h.ModTime, h.Uid, h.Gid)
			}
			b, _ := io.ReadAll(tr)
			out[h.Name] = b
		}
		rc.Close()
	}
	return out
}

func TestStandardImageIsReproducibleAndRunsAsNobody(t *testing.T) {
	a, err := Standard(meta, content())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Standard(meta, content())
	da, _ := a.Digest()
	db, _ := b.Digest()
	if da != db {
		t.Fatalf("two builds differ: %s %s", da, db)
	}
	cf, err := a.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65534:65534" || cf.Config.Entrypoint[0] != "/reloader" || !cf.Created.Time.Equal(meta.Created) {
		t.Fatalf("config: user %q entrypoint %v created %s", cf.Config.User, cf.Config.Entrypoint, cf.Created)
	}
	if cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Fatalf("platform %s/%s", cf.OS, cf.Architecture)
	}
	m, _ := a.Manifest()
	for k, want := range map[string]string{AnnotationSource: meta.Source, AnnotationRevision: meta.Commit, AnnotationVersion: "v1.2.3",
		AnnotationLicenses: "Apache-2.0", AnnotationCreated: "2026-11-30T12:00:00Z"} {
		if m.Annotations[k] != want {
			t.Errorf("annotation %s = %q, want %q", k, m.Annotations[k], want)
		}
	}
	fs := files(t, a)
	if !strings.Contains(string(fs["etc/passwd"]), "nobody:x:65534:65534") {
		t.Errorf("passwd has no entry for 65534: %q", fs["etc/passwd"])
	}
	if string(fs["reloader"]) != string(content().Binary) || string(fs["licenses/LICENSE"]) != "license text" {
		t.Error("binary or license missing")
	}
	roots := 0
	for rest := fs["etc/ssl/certs/ca-certificates.crt"]; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if _, err := x509.ParseCertificate(blk.Bytes); err != nil {
			t.Fatalf("CA bundle holds an unparsable certificate: %v", err)
		}
		roots++
	}
	if roots < 100 {
		t.Errorf("CA bundle has %d roots", roots)
	}
}

func TestUBIImageCarriesRedHatLabelsAndItsBase(t *testing.T) {
	base := mutate.MediaType(empty.Image, types.DockerManifestSchema2)
	img, err := UBI(base, "registry.example/ubi9/ubi-minimal@sha256:"+strings.Repeat("0", 64), "sha256:"+strings.Repeat("1", 64), meta, content())
	if err != nil {
		t.Fatal(err)
	}
	cf, _ := img.ConfigFile()
	for _, l := range []string{"name", "vendor", "version", "release", "summary", "description"} {
		if cf.Config.Labels[l] == "" {
			t.Errorf("label %q missing", l)
		}
	}
	m, _ := img.Manifest()
	if m.MediaType != types.OCIManifestSchema1 || m.Annotations[AnnotationBaseDigest] != "sha256:"+strings.Repeat("1", 64) {
		t.Errorf("manifest %s, base annotation %q", m.MediaType, m.Annotations[AnnotationBaseDigest])
	}
	if _, ok := files(t, img)["licenses/LICENSE"]; !ok {
		t.Error("no /licenses in the UBI image")
	}
}

func TestIndexListsEveryPlatform(t *testing.T) {
	var imgs []v1.Image
	for _, p := range []v1.Platform{amd64, {OS: "linux", Architecture: "arm", Variant: "v7"}} {
		c := content()
		c.Platform = p
		img, err := Standard(meta, c)
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	idx, err := Index(meta, imgs)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := idx.IndexManifest()
	if len(im.Manifests) != 2 || im.Manifests[1].Platform.Variant != "v7" || im.MediaType != types.OCIImageIndex {
		t.Fatalf("index: %+v", im)
	}
	if _, _, err := SelectPlatform(idx, v1.Platform{OS: "linux", Architecture: "arm64"}); err == nil {
		t.Fatal("selected a platform the index does not have")
	}
}

// The environment a variant adds (GODEBUG=fips140=only in the -fips images)
// replaces a base's setting of the same key rather than standing beside it,
// and keeps the base's other settings: which of two settings of one key a
// reader takes differs between readers.
func TestAddedEnvironmentReplacesTheBasesSettingOfTheKey(t *testing.T) {
	base, err := mutate.Config(mutate.MediaType(empty.Image, types.DockerManifestSchema2),
		v1.Config{Env: []string{"PATH=/usr/bin", "GODEBUG=fips140=off"}})
	if err != nil {
		t.Fatal(err)
	}
	c := content()
	c.Env = []string{"GODEBUG=fips140=only"}
	ubi, err := UBI(base, "registry.example/ubi9/ubi-minimal@sha256:"+strings.Repeat("0", 64), "sha256:"+strings.Repeat("1", 64), meta, c)
	if err != nil {
		t.Fatal(err)
	}
	scratch, err := Standard(meta, c)
	if err != nil {
		t.Fatal(err)
	}
	for img, want := range map[v1.Image]string{
		ubi:     "PATH=/usr/bin GODEBUG=fips140=only",
		scratch: "PATH=/ SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt GODEBUG=fips140=only",
	} {
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(cf.Config.Env, " "); got != want {
			t.Errorf("environment %q, want %q", got, want)
		}
	}
}

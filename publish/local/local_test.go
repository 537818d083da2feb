package local_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/reloader-dev/reloader/publish/local"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/verify"
	"github.com/reloader-dev/reloader/test/registry"

	"github.com/reloader-dev/reloader/test/tools"
)

// The tests release the real controller, for linux/amd64 only (the
// --platforms users have) to keep the cross-compilation short.
const controller = "./cmd/reloader"

var amd64 = []v1.Platform{{OS: "linux", Architecture: "amd64"}}

var created = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func writeChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "reloader-test")
	files := map[string]string{
		"Chart.yaml":            "apiVersion: v2\nname: reloader-test\nversion: 0.1.0\nappVersion: v0.0.0-test\ndescription: chart for release tests\n",
		"values.yaml":           "image: reloader\n",
		"templates/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  image: {{ .Values.image }}\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		// Different file times per run must not change the chart digest.
		_ = os.Chtimes(filepath.Join(dir, p), time.Now(), time.Now())
	}
	return dir
}

// writeLibraryChart is a library chart, which Helm cannot install.
func writeLibraryChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "reloader-test-lib")
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, c := range map[string]string{
		"Chart.yaml":             "apiVersion: v2\nname: reloader-test-lib\nversion: 0.1.0\ntype: library\ndescription: library chart\n",
		"templates/_helpers.tpl": "{{- define \"lib.name\" -}}reloader{{- end -}}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func release1(t *testing.T, ctx context.Context, host, ubiBase, out string) *local.Result {
	t.Helper()
	license := filepath.Join(t.TempDir(), "LICENSE")
	if err := os.WriteFile(license, []byte("Apache License, Version 2.0 (test copy)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var logb bytes.Buffer
	res, err := local.Run(ctx, local.Options{
		ModuleDir: "../..", MainPackage: controller, OutDir: out, Registry: host, UBIBase: ubiBase,
		Version: "v1.2.3", Commit: strings.Repeat("ab", 20), Created: created, NoScan: true, Platforms: amd64,
		SupportFile: releasetest.SupportTableFile(t, "v1.2.3"),
		ChartDirs:   []string{writeChart(t), writeLibraryChart(t)}, LicenseFile: license, Log: &logb,
	})
	t.Logf("release log:\n%s", logb.String())
	if err != nil {
		t.Fatalf("local release: %v", err)
	}
	return res
}

// content is what must repeat between two builds: everything except the
// signatures and the attestations (ECDSA signatures are randomised).
func content(l *release.Lock) map[string]string {
	m := map[string]string{}
	for _, a := range l.Artifacts {
		switch a.Kind {
		case release.KindSignature, release.KindAttestation:
			continue
		}
		repo := a.Repository[strings.Index(a.Repository, "/"):] // drop the host
		m[strings.Join([]string{string(a.Kind), a.Name, a.Platform, a.ArtifactType, repo}, " ")] = a.Digest
	}
	return m
}

func readRelease(t *testing.T, res *local.Result) (lockBytes, bundle []byte) {
	t.Helper()
	var err error
	if lockBytes, err = os.ReadFile(res.LockPath); err != nil {
		t.Fatal(err)
	}
	if bundle, err = os.ReadFile(res.BundlePath); err != nil {
		t.Fatal(err)
	}
	return lockBytes, bundle
}

func verifyAll(ctx context.Context, lockBytes, bundle []byte, expect release.Signer) error {
	opts := verify.Options{Expect: expect}
	l, err := verify.Lock(ctx, lockBytes, bundle, opts)
	if err != nil {
		return err
	}
	_, err = verify.Artifacts(ctx, l, opts)
	return err
}

func TestLocalRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("builds, scans and signs a whole release")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()

	// Release 1 on go-containerregistry's registry (OCI referrers API),
	// release 2 on CNCF distribution (no referrers API, files on disk).
	inproc, err := registry.StartInProcess(registry.InProcessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer inproc.Stop()
	distDir := t.TempDir()
	dist, err := registry.StartDistribution(ctx, distDir)
	if err != nil {
		t.Fatal(err)
	}
	defer dist.Stop()

	// Both releases build on one base reference, as two CI runs would.
	ubiBase, err := local.PushStandInBase(ctx, inproc.Host+"/stand-in/ubi-minimal", created)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	firstOut, secondOut := t.TempDir(), t.TempDir()
	first := release1(t, ctx, inproc.Host, ubiBase, firstOut)
	t.Logf("first release took %s", time.Since(start))
	second := release1(t, ctx, dist.Host, ubiBase, secondOut)

	t.Run("two builds of one commit have identical digests", func(t *testing.T) {
		a, b := content(first.Lock), content(second.Lock)
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("artifact sets differ: %d vs %d", len(a), len(b))
		}
		for k, d := range a {
			// The CycloneDX and SPDX 3.0.1 SBOMs name where each layer
			// is published (BSI TR-03183-2 v2.1's deployable URI): two
			// registries, two documents, the same once the host is read
			// as one (sameButTheRegistry).
			if (strings.Contains(k, "cyclonedx") || strings.Contains(k, "spdx3")) && b[k] != "" {
				continue
			}
			if b[k] != d {
				t.Errorf("%s: %s then %s", k, d, b[k])
			}
		}
		sameButTheRegistry(t, filepath.Join(firstOut, "sbom"), inproc.Host, filepath.Join(secondOut, "sbom"), dist.Host)
		kinds := map[release.Kind]int{}
		for _, x := range first.Lock.Artifacts {
			kinds[x.Kind]++
		}
		// 4 indexes (standard, ubi, fips, ubi-fips), an image of each
		// (linux/amd64 only), 3 SBOMs per image (SPDX 2.3, SPDX 3.0.1, CycloneDX), 1 chart (the library chart
		// is not published), a cosign .att (SBOMs and provenance) for each
		// image and index, and signatures for everything signed. A
		// key-signed release has no Sigstore bundle: the cosign CLI would
		// then take every subject for the bundle format.
		want := map[release.Kind]int{release.KindImageIndex: 4, release.KindImage: 4, release.KindSBOM: 12,
			release.KindChart: 1, release.KindAttestation: 8, release.KindSignature: 21}
		for k, n := range want {
			if kinds[k] != n {
				t.Errorf("lock has %d %s artifacts, want %d", kinds[k], k, n)
			}
		}
	})

	lockBytes, bundle := readRelease(t, second)
	expect := second.Lock.Signer

	t.Run("a release built with --no-scan says so in its lock and page", func(t *testing.T) {
		if second.Lock.Scanned() || second.Lock.Scan == nil || !second.Lock.Scan.Skipped {
			t.Fatalf("lock scan record %+v", second.Lock.Scan)
		}
		page, err := os.ReadFile(filepath.Join(filepath.Dir(second.LockPath), "page", "versions.md"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(page), "UNSCANNED") {
			t.Errorf("the versions page does not say the release is unscanned:\n%s", page)
		}
	})

	t.Run("every artifact verifies offline", func(t *testing.T) {
		if err := verifyAll(ctx, lockBytes, bundle, expect); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("version tags point at the locked digests", func(t *testing.T) {
		for _, a := range second.Lock.Artifacts {
			if (a.Kind != release.KindImageIndex && a.Kind != release.KindChart) || a.Tag == "" {
				continue
			}
			desc, err := remote.Head(mustRef(t, a.Repository+":"+a.Tag))
			if err != nil || desc.Digest.String() != a.Digest {
				t.Errorf("%s:%s is %v (%v), the lock says %s", a.Repository, a.Tag, desc, err, a.Digest)
			}
		}
		if _, err := remote.Head(mustRef(t, second.LockRef)); err != nil {
			t.Errorf("the lock artifact %s: %v", second.LockRef, err)
		}
	})

	t.Run("another signer's key is refused", func(t *testing.T) {
		other := first.Lock.Signer // a key generated for the other release
		err := verifyAll(ctx, lockBytes, bundle, other)
		if err == nil || !strings.Contains(err.Error(), "signature does not verify") {
			t.Fatalf("verification with the wrong key: %v", err)
		}
	})

	t.Run("the controller binary from the image runs", func(t *testing.T) {
		plat := runtime.GOOS + "/" + runtime.GOARCH
		for _, a := range second.Lock.Find(release.KindImage, "reloader") {
			if a.Platform != plat {
				continue
			}
			bin := extract(t, a.Repository+"@"+a.Digest, "reloader")
			// The real controller: its --help lists its flags.
			out, err := exec.CommandContext(ctx, bin, "--help").CombinedOutput()
			if !strings.Contains(string(out), "--reload-strategy") {
				t.Fatalf("%s --help: %v\n%s", bin, err, out)
			}
			data, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(data, []byte("v1.2.3")) || !bytes.Contains(data, []byte(strings.Repeat("ab", 20))) {
				t.Fatal("the controller binary is not stamped with version and commit")
			}
			return
		}
		t.Skipf("no image for %s/%s", runtime.GOOS, runtime.GOARCH)
	})

	t.Run("a tampered layer fails verification", func(t *testing.T) {
		img := second.Lock.Find(release.KindImage, "reloader")[0]
		layer := biggestLayer(t, img.Repository+"@"+img.Digest)
		path := filepath.Join(distDir, "storage", "docker", "registry", "v2", "blobs", "sha256", layer.Hex[:2], layer.Hex, "data")
		restore := flipByte(t, path)
		defer restore()
		err := verifyAll(ctx, lockBytes, bundle, expect)
		if err == nil {
			t.Fatal("a modified layer verified")
		}
		t.Logf("message: %v", err)
		if !strings.Contains(err.Error(), img.Digest) || !strings.Contains(err.Error(), "blob "+layer.String()+" was altered") {
			t.Fatalf("the message does not name the image and the problem: %v", err)
		}
	})

	t.Run("a tampered signature fails verification", func(t *testing.T) {
		img := second.Lock.Find(release.KindImage, "reloader-ubi")[0]
		restore := tamperSignature(t, img)
		defer restore()
		err := verifyAll(ctx, lockBytes, bundle, expect)
		if err == nil {
			t.Fatal("a forged signature verified")
		}
		t.Logf("message: %v", err)
		if !strings.Contains(err.Error(), img.Digest) || !strings.Contains(err.Error(), "signature does not verify") {
			t.Fatalf("the message does not name the image and the problem: %v", err)
		}
	})

	t.Run("a tampered lock fails verification", func(t *testing.T) {
		img := second.Lock.Find(release.KindImage, "reloader")[0]
		forged := bytes.Replace(lockBytes, []byte(img.Digest), []byte("sha256:"+strings.Repeat("0", 64)), 1)
		err := verifyAll(ctx, forged, bundle, expect)
		if err == nil {
			t.Fatal("a modified lock verified")
		}
		t.Logf("message: %v", err)
		if !strings.Contains(err.Error(), "release lock") || !strings.Contains(err.Error(), "signature does not verify") {
			t.Fatalf("unclear message: %v", err)
		}
	})

	t.Run("after the tampering is undone, everything verifies again", func(t *testing.T) {
		if err := verifyAll(ctx, lockBytes, bundle, expect); err != nil {
			t.Fatal(err)
		}
	})
}

func biggestLayer(t *testing.T, ref string) v1.Hash {
	t.Helper()
	img, err := remote.Image(mustRef(t, ref))
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	best := m.Layers[0]
	for _, l := range m.Layers {
		if l.Size > best.Size {
			best = l
		}
	}
	return best.Digest
}

func flipByte(t *testing.T, path string) func() {
	t.Helper()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the stored layer: %v", err)
	}
	bad := append([]byte(nil), orig...)
	bad[len(bad)/2] ^= 0xff
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	return func() { _ = os.WriteFile(path, orig, 0o644) }
}

// tamperSignature replaces the image's cosign signature manifest with one
// whose signature is over other bytes (a valid-looking, wrong signature).
func tamperSignature(t *testing.T, img release.Artifact) func() {
	t.Helper()
	tag := mustRef(t, img.Repository+":sha256-"+strings.TrimPrefix(img.Digest, "sha256:")+".sig")
	desc, err := remote.Get(tag)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(desc.Manifest, &m); err != nil {
		t.Fatal(err)
	}
	ann := m["layers"].([]any)[0].(map[string]any)["annotations"].(map[string]any)
	sig, err := base64.StdEncoding.DecodeString(ann["dev.cosignproject.cosign/signature"].(string))
	if err != nil {
		t.Fatal(err)
	}
	sig[len(sig)-3] ^= 0x01
	ann["dev.cosignproject.cosign/signature"] = base64.StdEncoding.EncodeToString(sig)
	raw, _ := json.Marshal(m)
	if err := remote.Put(tag, rawManifest{raw, string(desc.MediaType)}); err != nil {
		t.Fatal(err)
	}
	return func() { _ = remote.Put(tag, rawManifest{desc.Manifest, string(desc.MediaType)}) }
}

type rawManifest struct {
	raw []byte
	mt  string
}

func (r rawManifest) RawManifest() ([]byte, error)        { return r.raw, nil }
func (r rawManifest) MediaType() (types.MediaType, error) { return types.MediaType(r.mt), nil }

// extract copies path out of the image's layers into a temp file.
func extract(t *testing.T, ref, path string) string {
	t.Helper()
	img, err := remote.Image(mustRef(t, ref))
	if err != nil {
		t.Fatal(err)
	}
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
			if h.Name != path {
				continue
			}
			out := filepath.Join(t.TempDir(), "reloader")
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(out, data, 0o755); err != nil {
				t.Fatal(err)
			}
			rc.Close()
			return out
		}
		rc.Close()
	}
	t.Fatalf("%s not found in %s", path, ref)
	return ""
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sameButTheRegistry holds the SBOM files of two builds equal once the first
// registry's host is replaced by the second's.
func sameButTheRegistry(t *testing.T, dirA, hostA, dirB, hostB string) {
	t.Helper()
	files, err := os.ReadDir(dirA)
	if err != nil || len(files) == 0 {
		t.Fatalf("SBOMs of the first build: %d files, %v", len(files), err)
	}
	for _, f := range files {
		a, err := os.ReadFile(filepath.Join(dirA, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dirB, f.Name()))
		if err != nil {
			t.Fatalf("the second build wrote no %s: %v", f.Name(), err)
		}
		if !bytes.Equal(bytes.ReplaceAll(a, []byte(hostA), []byte(hostB)), b) {
			t.Errorf("%s differs between two builds beyond the registry's host", f.Name())
		}
	}
}

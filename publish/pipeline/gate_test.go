package pipeline_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/test/registry"

	"github.com/reloader-dev/reloader/test/tools"
)

// A scan that cannot run must stop the release before anything reaches the
// registry: the gate judges the local OCI layout and fails closed, and a
// refused release leaves no manifest, blob or tag of it behind. The gate
// judges every image, the -fips ones too.
func TestAFailedGateLeavesNothingInTheRegistry(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a whole release")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	reg := registry.InProcess(t)
	keys := t.TempDir()
	priv, _, err := sign.GenerateKey(keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := sign.FromKey(sign.KeyOptions{PrivateKeyPath: priv})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var logb bytes.Buffer
	res, err := pipeline.Run(ctx, pipeline.Options{
		Version: "v1.2.3", Commit: strings.Repeat("ef", 20), Source: "https://github.com/reloader-dev/reloader",
		Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Now: time.Now(),
		ModuleDir: "../..", MainPackage: "./cmd/reloader", Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}},
		Registry: reg.Host + "/reloader-dev", StandardName: "reloader", OutDir: out, Signer: signer, Log: &logb,
		SupportFile: releasetest.SupportTableFile(t, "v1.2.3"),
		Scan: &pipeline.ScanOptions{PolicyPath: "../../release/gate/release-policy.yaml",
			Trivy: gate.TrivyOptions{Binary: filepath.Join(t.TempDir(), "no-such-trivy")}},
	})
	t.Logf("release log:\n%s", logb.String())
	if !errors.Is(err, gate.ErrRefused) {
		t.Fatalf("release without a scan: %v", err)
	}
	if res.Gate == nil || res.Gate.Passed {
		t.Fatalf("gate result %+v", res.Gate)
	}
	if _, err := remote.Head(mustRef(t, reg.Host+"/reloader-dev/reloader:v1.2.3")); !notFound(err) {
		t.Errorf("the version tag exists after a failed gate: %v", err)
	}
	judged := map[string]bool{}
	for _, a := range res.Gate.Findings {
		if a.Decision != gate.DecisionFail {
			t.Errorf("finding %+v", a)
		}
		judged[a.Image] = true
	}
	if !judged["reloader linux/amd64"] || !judged["reloader-fips linux/amd64"] {
		t.Errorf("the gate judged %v, want the standard and the -fips image", judged)
	}
	if _, err := os.Stat(filepath.Join(out, release.LockFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a lock was written after a failed gate: %v", err)
	}
	host, err := name.NewRegistry(reg.Host)
	if err != nil {
		t.Fatal(err)
	}
	repos, err := remote.Catalog(ctx, host)
	if err != nil {
		t.Fatal(err)
	}
	if len(repos) != 0 {
		t.Errorf("the registry holds %v after a refused release", repos)
	}
	// And by digest: not one image of the refused release is pullable.
	for _, digest := range builtImages(t, out) {
		if _, err := remote.Head(mustRef(t, reg.Host+"/reloader-dev/reloader@"+digest)); !notFound(err) {
			t.Errorf("image %s of the refused release is in the registry: %v", digest, err)
		}
	}
}

// builtImages lists the manifest digests of the release's OCI layout: what
// the gate judged.
func builtImages(t *testing.T, out string) []string {
	t.Helper()
	p, err := layout.FromPath(filepath.Join(out, "oci"))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var ds []string
	for _, d := range m.Manifests {
		ds = append(ds, d.Digest.String())
	}
	if len(ds) == 0 {
		t.Fatal("the OCI layout holds nothing")
	}
	return ds
}

func notFound(err error) bool {
	var te *transport.Error
	return errors.As(err, &te) && te.StatusCode == 404
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	r, err := name.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

package review

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/reloader-dev/reloader/internal/image"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/sbom"
)

// A fixture release is made by the release pipeline's own code: a Go
// program linking golang.org/x/sync is built, packaged by release/image
// and catalogued by sbom.Generate (syft, licences from the module cache).
// Two releases differ only in the x/sync version, as two releases of the
// controller differ when one dependency is bumped.
type fixture struct {
	lock  *release.Lock
	sboms []SBOM
}

var (
	fixturesOnce sync.Once
	fixtures     map[string]*fixture
	fixturesErr  error
)

const (
	oldSync = "v0.22.0"
	newSync = "v0.24.0"
)

var fixtureCreated = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// releases returns the fixture releases keyed by the x/sync version.
func releases(t *testing.T) map[string]*fixture {
	t.Helper()
	if testing.Short() {
		t.Skip("builds two programs and runs syft on their images")
	}
	fixturesOnce.Do(func() {
		fixtures = map[string]*fixture{}
		dir, err := os.MkdirTemp("", "review-fixtures-")
		if err != nil {
			fixturesErr = err
			return
		}
		// Cleanup belongs to the process: the fixtures serve every test.
		for i, v := range []string{oldSync, newSync} {
			f, err := makeRelease(filepath.Join(dir, v), fmt.Sprintf("v1.0.%d", i), v)
			if err != nil {
				fixturesErr = fmt.Errorf("fixture release with x/sync %s: %w", v, err)
				return
			}
			fixtures[v] = f
		}
	})
	if fixturesErr != nil {
		t.Fatal(fixturesErr)
	}
	return fixtures
}

func makeRelease(dir, version, syncVersion string) (*fixture, error) {
	ctx := context.Background()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return nil, err
	}
	files := map[string]string{
		"go.mod":  "module example.com/app\n\ngo 1.26\n\nrequire golang.org/x/sync " + syncVersion + "\n",
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"golang.org/x/sync/errgroup\"\n)\n\nfunc main() {\n\tvar g errgroup.Group\n\tg.Go(func() error { return nil })\n\tfmt.Println(g.Wait())\n}\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(data), 0o644); err != nil {
			return nil, err
		}
	}
	bin := filepath.Join(dir, "app")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, ".")
	cmd.Dir = src
	// Only the module cache: the fixture must build offline.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	p := v1.Platform{OS: "linux", Architecture: "amd64"}
	img, err := image.Standard(image.Metadata{Name: "app", Version: version, Created: fixtureCreated},
		image.Content{Platform: p, Binary: data, BinaryPath: "/app"})
	if err != nil {
		return nil, err
	}
	imgDigest, err := img.Digest()
	if err != nil {
		return nil, err
	}
	modCache, err := sbom.GoModCache(ctx, src)
	if err != nil {
		return nil, err
	}
	docs, err := sbom.Generate(ctx, img, sbom.Options{Name: "app", Version: version, Created: fixtureCreated,
		Namespace: "https://example.com/sbom", WorkDir: dir, GoModCache: modCache,
		MainModule: "example.com/app", Producer: "Example project"})
	if err != nil {
		return nil, err
	}
	repo := "registry.example/app"
	l := &release.Lock{Schema: release.LockSchema, Version: version, Source: "https://example.com/app",
		Commit: strings.Repeat("c", 40), Created: fixtureCreated, Signer: release.Signer{PublicKey: "test"}}
	l.Artifacts = append(l.Artifacts,
		release.Artifact{Kind: release.KindImageIndex, Name: "app", Variant: "standard", Repository: repo, Digest: "sha256:" + strings.Repeat("1", 64), Size: 1, MediaType: "application/vnd.oci.image.index.v1+json"},
		release.Artifact{Kind: release.KindImage, Name: "app", Variant: "standard", Platform: p.String(), Repository: repo, Digest: imgDigest.String(), Size: 1, MediaType: "application/vnd.oci.image.manifest.v1+json"})
	f := &fixture{lock: l}
	for _, d := range docs {
		a := release.Artifact{Kind: release.KindSBOM, Name: "app", Variant: "standard", Platform: p.String(), Repository: repo,
			Digest: fmt.Sprintf("sha256:%x", sha256.Sum256(d.Data)), Size: int64(len(d.Data)), MediaType: "application/vnd.oci.image.manifest.v1+json",
			ArtifactType: d.MediaType, Subject: imgDigest.String()}
		l.Artifacts = append(l.Artifacts, a)
		f.sboms = append(f.sboms, SBOM{Artifact: a, Data: d.Data})
	}
	return f, l.Validate()
}

func repoLicencePolicy(t *testing.T) *LicencePolicy {
	t.Helper()
	p, err := ReadLicencePolicy("licence-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// build reviews a fixture with the repository's licence policy, checking
// the SBOMs against NTIA 2021: the fixture's own module declares no licence,
// which CISA 2025 requires (buildProfile).
func build(t *testing.T, f *fixture, res *gate.Result, rp *gate.Policy) *Review {
	t.Helper()
	return buildProfile(t, f, res, rp, ProfileNTIA2021)
}

func buildProfile(t *testing.T, f *fixture, res *gate.Result, rp *gate.Policy, p Profile) *Review {
	t.Helper()
	r, err := Build(Input{Lock: f.lock, SBOMs: f.sboms, Gate: res, ReleasePolicy: rp, Licences: repoLicencePolicy(t), Profile: p,
		Identity: Identity{Signer: "public key sha256:test", LockDigest: "sha256:" + strings.Repeat("d", 64), Verification: "verified in test"},
		Now:      fixtureCreated})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// withoutSupplier is f with the SPDX supplier of the named component
// removed, as an SBOM from a tool that names none; the lock records the
// changed document's digest, so only the minimum-elements check objects.
func withoutSupplier(t *testing.T, f *fixture, name string) *fixture {
	t.Helper()
	lock := *f.lock
	lock.Artifacts = append([]release.Artifact(nil), f.lock.Artifacts...)
	g := &fixture{lock: &lock}
	for _, s := range f.sboms {
		if s.Artifact.ArtifactType == sbom.MediaTypeSPDX {
			var doc map[string]any
			if err := json.Unmarshal(s.Data, &doc); err != nil {
				t.Fatal(err)
			}
			pkgs, _ := doc["packages"].([]any)
			for _, p := range pkgs {
				if pkg, ok := p.(map[string]any); ok && pkg["name"] == name {
					pkg["supplier"] = "NOASSERTION"
				}
			}
			data, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			old := s.Artifact.Digest
			s.Data = data
			s.Artifact.Digest = fmt.Sprintf("sha256:%x", sha256.Sum256(data))
			s.Artifact.Size = int64(len(data))
			for i, a := range lock.Artifacts {
				if a.Digest == old {
					lock.Artifacts[i] = s.Artifact
				}
			}
		}
		g.sboms = append(g.sboms, s)
	}
	return g
}

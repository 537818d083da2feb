// Command trivyfixtures regenerates release/gate/testdata/reports/*.json: real
// Trivy JSON reports of small images, written by Trivy itself, offline.
//
// It builds a synthetic vulnerability database with the trivy-db Go API
// (made-up CVE-2099-* advisories on golang.org/x/sync and golang.org/x/time),
// serves it as an OCI artifact from an in-process registry on 127.0.0.1 so
// Trivy downloads it through its normal --db-repository path, pushes three
// images (one Go binary each, built here) to the same registry and runs
// `trivy image` on each by digest.
//
// It is a module of its own so trivy-db's dependencies stay out of the
// product's go.mod. Run it from the repository root:
//
//	GOEXPERIMENT=jsonv2 go install github.com/aquasecurity/trivy/cmd/trivy@v0.74.0
//	(cd hack/release/trivyfixtures && go run . --trivy "$(go env GOPATH)/bin/trivy" --out ../../../release/gate/testdata/reports)
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/aquasecurity/trivy-db/pkg/db"
	dbtypes "github.com/aquasecurity/trivy-db/pkg/types"
	"github.com/google/go-containerregistry/pkg/name"
	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	bolt "go.etcd.io/bbolt"
)

// bucket is a Go-ecosystem advisory source; Trivy reads every "go::" bucket.
const bucket = "go::Reloader synthetic advisories"

// advisory is one made-up vulnerability.
type advisory struct {
	id, pkg, severity, title string
	vulnerable, patched      []string
}

var advisories = []advisory{
	{id: "CVE-2099-0001", pkg: "golang.org/x/sync", severity: "HIGH", title: "synthetic: HIGH with a released fix",
		vulnerable: []string{"< 99.0.0"}, patched: []string{"99.0.0"}},
	{id: "CVE-2099-0002", pkg: "golang.org/x/time", severity: "HIGH", title: "synthetic: HIGH without a fix",
		vulnerable: []string{">= 0.0.0"}},
	{id: "CVE-2099-0003", pkg: "golang.org/x/time", severity: "MEDIUM", title: "synthetic: MEDIUM below the gate",
		vulnerable: []string{"< 99.0.0"}, patched: []string{"99.0.0"}},
}

// scenarios maps a report file to the fixture program in its image.
var scenarios = []struct{ report, app string }{
	{"high-fixed.json", "./apps/withsync"},
	{"high-unfixed.json", "./apps/withtime"},
	{"clean.json", "./apps/plain"},
}

func main() {
	trivy := flag.String("trivy", "trivy", "trivy binary (v0.74.0)")
	out := flag.String("out", "../../../release/gate/testdata/reports", "directory for the reports")
	cache := flag.String("cache-dir", "", "keep Trivy's cache (with the synthetic DB) here, for trying the release gate with --skip-db-update")
	flag.Parse()
	if err := run(context.Background(), *trivy, *out, *cache); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, trivy, out, cache string) error {
	work, err := os.MkdirTemp("", "trivyfixtures-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("starting the registry: %w", err)
	}
	srv := &http.Server{Handler: ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	host := l.Addr().String()

	dbRepo := host + "/trivy-db:2"
	if err := pushDB(ctx, filepath.Join(work, "db"), dbRepo); err != nil {
		return err
	}
	if cache == "" {
		cache = filepath.Join(work, "cache")
	}
	for _, s := range scenarios {
		ref, err := pushImage(ctx, work, host+"/fixtures/"+s.report[:len(s.report)-len(".json")], s.app)
		if err != nil {
			return err
		}
		dst := filepath.Join(out, s.report)
		cmd := exec.CommandContext(ctx, trivy, "image", "--quiet", "--format", "json", "--output", dst,
			"--scanners", "vuln", "--image-src", "remote", "--cache-dir", cache, "--db-repository", dbRepo,
			"--skip-java-db-update", "--skip-version-check", "--disable-telemetry", ref)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("trivy on %s: %w", ref, err)
		}
		fmt.Printf("wrote %s (trivy image %s)\n", dst, ref)
	}
	// The fail-closed cases are derived from a real report: cut in half
	// (a scan interrupted mid-write) and empty (a scan that never wrote).
	full, err := os.ReadFile(filepath.Join(out, "high-fixed.json"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "malformed.json"), full[:len(full)/2], 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "empty.json"), nil, 0o644)
}

// pushDB builds the database in dir and pushes it as Trivy's DB artifact.
func pushDB(ctx context.Context, dir, repo string) error {
	if err := db.Init(dir); err != nil {
		return fmt.Errorf("creating the trivy db: %w", err)
	}
	dbc := db.Config{}
	err := dbc.BatchUpdate(func(tx *bolt.Tx) error {
		if err := dbc.PutDataSource(tx, bucket, dbtypes.DataSource{ID: "ghsa", Name: "Reloader synthetic advisories", URL: "https://example.invalid/advisories"}); err != nil {
			return err
		}
		for _, a := range advisories {
			if err := dbc.PutAdvisory(tx, []string{bucket, a.pkg}, a.id, dbtypes.Advisory{VulnerableVersions: a.vulnerable, PatchedVersions: a.patched}); err != nil {
				return err
			}
			sev, err := dbtypes.NewSeverity(a.severity)
			if err != nil {
				return err
			}
			// Trivy takes the severity of the advisory's data source ("ghsa").
			if err := dbc.PutVulnerability(tx, a.id, dbtypes.Vulnerability{Title: a.title, Description: "Made-up advisory for release gate tests; not a real vulnerability.",
				VendorSeverity: dbtypes.VendorSeverity{"ghsa": sev}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("filling the trivy db: %w", err)
	}
	if err := db.Close(); err != nil {
		return err
	}
	meta, _ := json.Marshal(map[string]any{"Version": 2, "NextUpdate": time.Now().Add(24 * time.Hour).UTC(), "UpdatedAt": time.Now().UTC()})
	dbBytes, err := os.ReadFile(db.Path(dir))
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for n, data := range map[string][]byte{"trivy.db": dbBytes, "metadata.json": meta} {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(data)), ModTime: time.Now()}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, "application/vnd.aquasec.trivy.config.v1+json")
	img, err = mutate.Append(img, mutate.Addendum{
		Layer: static.NewLayer(buf.Bytes(), "application/vnd.aquasec.trivy.db.layer.v1.tar+gzip"),
		// Trivy names the downloaded file after the layer's title.
		Annotations: map[string]string{"org.opencontainers.image.title": "db.tar.gz"},
	})
	if err != nil {
		return err
	}
	ref, err := name.ParseReference(repo)
	if err != nil {
		return err
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx)); err != nil {
		return fmt.Errorf("pushing the trivy db: %w", err)
	}
	return nil
}

// pushImage builds app for linux/amd64 into a one-layer image and pushes it.
func pushImage(ctx context.Context, work, repo, app string) (string, error) {
	bin := filepath.Join(work, filepath.Base(app))
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, app)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s: %w", app, err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Name: "app", Mode: 0o755, Size: int64(len(data))}); err != nil {
		return "", err
	}
	if _, err := tw.Write(data); err != nil {
		return "", err
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	tarBytes := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(tarBytes)), nil })
	if err != nil {
		return "", err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return "", err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return "", err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Config.Entrypoint = []string{"/app"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return "", err
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	ref, err := name.NewDigest(repo + "@" + d.String())
	if err != nil {
		return "", err
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx)); err != nil {
		return "", fmt.Errorf("pushing %s: %w", ref, err)
	}
	return ref.String(), nil
}

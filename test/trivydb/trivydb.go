// Package trivydb builds offline Trivy vulnerability databases holding
// made-up advisories, and runs the real Trivy CLI against them, so tests can
// scan real images with no network: the public DB is out of reach on CI
// machines and in air gaps alike.
//
// The database is written with trivy-db's own Go API (the code Trivy's DB
// builder uses), in the schema the pinned Trivy reads, either as a Trivy
// cache directory (`--cache-dir DIR --skip-db-update --offline-scan`) or as
// the OCI artifact Trivy downloads (`--db-repository` on a loopback registry).
package trivydb

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aquasecurity/trivy-db/pkg/db"
	"github.com/aquasecurity/trivy-db/pkg/metadata"
	dbtypes "github.com/aquasecurity/trivy-db/pkg/types"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	bolt "go.etcd.io/bbolt"
)

// Trivy's media types for its DB artifact, and the layer title it names the
// downloaded file after.
const (
	ConfigMediaType types.MediaType = "application/vnd.aquasec.trivy.config.v1+json"
	LayerMediaType  types.MediaType = "application/vnd.aquasec.trivy.db.layer.v1.tar+gzip"
	layerTitle                      = "db.tar.gz"
)

// source is the data source the advisories are filed under. Trivy reads
// every "go::" bucket for Go modules and takes an advisory's severity from
// its data source's ID ("ghsa", as for GitHub's advisories).
var source = dbtypes.DataSource{ID: "ghsa", Name: "Reloader synthetic advisories", URL: "https://example.invalid/advisories"}

const bucket = "go::Reloader synthetic advisories"

// Advisory is one made-up vulnerability of a Go module.
type Advisory struct {
	// ID names it, e.g. "CVE-2099-1001"; use the CVE-2099 range so nobody
	// mistakes it for a real one.
	ID string
	// Module is the Go module path, e.g. "k8s.io/client-go".
	Module string
	// Severity is a Trivy severity: LOW, MEDIUM, HIGH or CRITICAL.
	Severity string
	// Vulnerable are Trivy version constraints, e.g. "<= 0.37.2"; Trivy
	// compares them with the module version without its "v".
	Vulnerable []string
	// Patched are the fixed versions; none means no fix is released.
	Patched []string
	Title   string
}

// Options configures Write.
type Options struct {
	Advisories []Advisory
	// UpdatedAt is the DB's build time (default now); NextUpdate defaults
	// to a day later, so Trivy sees a current DB.
	UpdatedAt, NextUpdate time.Time
}

// DB is a written database.
type DB struct {
	// CacheDir is a Trivy cache: pass it as --cache-dir with
	// --skip-db-update.
	CacheDir string
	// SHA256 is the digest of trivy.db, UpdatedAt its build time: what a
	// release records to say which DB a scan used.
	SHA256    string
	UpdatedAt time.Time
}

// trivy-db keeps its open database in a package variable, so two writers in
// one process must take turns.
var writeMu sync.Mutex

// Write creates a Trivy cache under cacheDir (cacheDir/db/trivy.db and
// metadata.json) holding opts.Advisories.
func Write(cacheDir string, opts Options) (*DB, error) {
	if len(opts.Advisories) == 0 {
		return nil, errors.New("writing a trivy db: no advisories")
	}
	for _, a := range opts.Advisories {
		if err := a.validate(); err != nil {
			return nil, fmt.Errorf("writing a trivy db: %w", err)
		}
	}
	if opts.UpdatedAt.IsZero() {
		opts.UpdatedAt = time.Now()
	}
	if opts.NextUpdate.IsZero() {
		opts.NextUpdate = opts.UpdatedAt.Add(24 * time.Hour)
	}
	dir := filepath.Join(cacheDir, "db")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("writing a trivy db: %w", err)
	}
	writeMu.Lock()
	err := fill(dir, opts.Advisories)
	writeMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("writing the trivy db in %s: %w", dir, err)
	}
	meta := metadata.Metadata{Version: db.SchemaVersion, UpdatedAt: opts.UpdatedAt.UTC(), NextUpdate: opts.NextUpdate.UTC(),
		// Set as Trivy sets it after a download; without it Trivy takes
		// the DB for one copied in by hand and would want to replace it.
		DownloadedAt: opts.UpdatedAt.UTC()}
	if err := metadata.NewClient(dir).Update(meta); err != nil {
		return nil, fmt.Errorf("writing the trivy db metadata in %s: %w", dir, err)
	}
	raw, err := os.ReadFile(db.Path(dir))
	if err != nil {
		return nil, fmt.Errorf("reading back the trivy db: %w", err)
	}
	sum := sha256.Sum256(raw)
	return &DB{CacheDir: cacheDir, SHA256: hex.EncodeToString(sum[:]), UpdatedAt: meta.UpdatedAt}, nil
}

func (a Advisory) validate() error {
	if a.ID == "" || a.Module == "" {
		return fmt.Errorf("advisory %q for module %q: ID and Module are required", a.ID, a.Module)
	}
	if _, err := dbtypes.NewSeverity(strings.ToUpper(a.Severity)); err != nil {
		return fmt.Errorf("advisory %s: severity %q: %w", a.ID, a.Severity, err)
	}
	if len(a.Vulnerable) == 0 {
		return fmt.Errorf("advisory %s: no vulnerable version range", a.ID)
	}
	return nil
}

func fill(dir string, advisories []Advisory) (err error) {
	if err := db.Init(dir); err != nil {
		return fmt.Errorf("creating: %w", err)
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing: %w", cerr)
		}
	}()
	dbc := db.Config{}
	return dbc.BatchUpdate(func(tx *bolt.Tx) error {
		if err := dbc.PutDataSource(tx, bucket, source); err != nil {
			return err
		}
		for _, a := range advisories {
			if err := dbc.PutAdvisory(tx, []string{bucket, a.Module}, a.ID,
				dbtypes.Advisory{VulnerableVersions: a.Vulnerable, PatchedVersions: a.Patched}); err != nil {
				return fmt.Errorf("advisory %s: %w", a.ID, err)
			}
			sev, _ := dbtypes.NewSeverity(strings.ToUpper(a.Severity))
			title := a.Title
			if title == "" {
				title = "synthetic " + strings.ToUpper(a.Severity) + " advisory for " + a.Module
			}
			if err := dbc.PutVulnerability(tx, a.ID, dbtypes.Vulnerability{Title: title,
				Description:    "Made-up advisory for tests; not a real vulnerability.",
				VendorSeverity: dbtypes.VendorSeverity{source.ID: sev}}); err != nil {
				return fmt.Errorf("vulnerability %s: %w", a.ID, err)
			}
		}
		return nil
	})
}

// Image packages d as the OCI artifact Trivy downloads with --db-repository
// (a gzip tar of trivy.db and metadata.json, under Trivy's media types).
func (d *DB) Image() (v1.Image, error) {
	dir := filepath.Join(d.CacheDir, "db")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range []string{"trivy.db", "metadata.json"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, fmt.Errorf("packaging the trivy db: %w", err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: f, Mode: 0o644, Size: int64(len(data)), ModTime: d.UpdatedAt}); err != nil {
			return nil, fmt.Errorf("packaging the trivy db: %w", err)
		}
		if _, err := tw.Write(data); err != nil {
			return nil, fmt.Errorf("packaging the trivy db: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("packaging the trivy db: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("packaging the trivy db: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, ConfigMediaType)
	img, err := mutate.Append(img, mutate.Addendum{
		Layer:       static.NewLayer(buf.Bytes(), LayerMediaType),
		Annotations: map[string]string{"org.opencontainers.image.title": layerTitle},
	})
	if err != nil {
		return nil, fmt.Errorf("packaging the trivy db: %w", err)
	}
	return img, nil
}

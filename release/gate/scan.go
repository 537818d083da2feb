package gate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// TrivyOptions configures one Trivy run.
type TrivyOptions struct {
	// Binary is the trivy executable (a path, or a name looked up in PATH).
	Binary string
	// CacheDir is Trivy's cache (vulnerability DB); empty uses Trivy's own.
	CacheDir string
	// DBRepository overrides where Trivy fetches its DB (an OCI reference),
	// e.g. a mirror inside an air gap or a loopback registry in tests.
	DBRepository string
	// SkipDBUpdate uses the DB already in CacheDir and never downloads one.
	SkipDBUpdate bool
	// Insecure allows plain-HTTP registries (loopback only).
	Insecure bool
	// OutputDir receives the report file; required.
	OutputDir string
}

// ScanImage runs Trivy on one image of a local OCI layout, selected by its
// manifest digest (`trivy image --input DIR@sha256:...`), and returns the
// path of the JSON report it wrote and the parsed report. Scanning the
// layout, not a registry, is what lets a release be judged before any of
// it is pushed. Trivy's own exit code is not the verdict (Evaluate is); a
// Trivy failure is an error, and so is a report that does not parse.
func ScanImage(ctx context.Context, opts TrivyOptions, layoutDir, digest, name string) (string, *Report, error) {
	if strings.ContainsAny(layoutDir, "@:") {
		// Trivy splits --input at the first '@' or ':' to find the image.
		return "", nil, fmt.Errorf("scanning %s: the layout path %q must not contain '@' or ':'", name, layoutDir)
	}
	ref := layoutDir + "@" + digest
	if opts.Binary == "" {
		return "", nil, errors.New("scanning images: no trivy binary configured")
	}
	bin, err := exec.LookPath(opts.Binary)
	if err != nil {
		return "", nil, fmt.Errorf("scanning %s: finding trivy: %w", ref, err)
	}
	if err := os.MkdirAll(opts.OutputDir, 0o755); err != nil {
		return "", nil, fmt.Errorf("scanning %s: %w", ref, err)
	}
	out := filepath.Join(opts.OutputDir, name+".trivy.json")
	_ = os.Remove(out) // a stale report from an earlier run must not be read
	// No version check or telemetry: releases run in air gaps too, and a
	// scan must not depend on reaching anything but the registry and DB.
	args := []string{"image", "--quiet", "--format", "json", "--output", out,
		"--scanners", "vuln", "--input", ref, "--pkg-types", "os,library",
		"--skip-version-check", "--disable-telemetry"}
	if opts.CacheDir != "" {
		args = append(args, "--cache-dir", opts.CacheDir)
	}
	if opts.DBRepository != "" {
		args = append(args, "--db-repository", opts.DBRepository)
	}
	if opts.SkipDBUpdate {
		args = append(args, "--skip-db-update", "--skip-java-db-update", "--offline-scan")
	}
	if opts.Insecure {
		args = append(args, "--insecure")
	}
	rep, err := runTrivy(ctx, bin, args, out, "scanning "+ref)
	if err != nil {
		return out, nil, err
	}
	return out, rep, nil
}

// runTrivy runs trivy with args and reads the JSON report it wrote to out;
// what names the run in errors.
func runTrivy(ctx context.Context, bin string, args []string, out, what string) (*Report, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s with trivy: %w: %s", what, err, tail(stderr.Bytes(), 2048))
	}
	rep, err := ReadReport(out)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return rep, nil
}

// ScannerInfo is what a scan ran with, recorded in the release lock.
type ScannerInfo struct {
	Version string
	// DBDigest is the sha256 of the vulnerability database file.
	DBDigest string
	// DBBuilt is when the database was built (its UpdatedAt).
	DBBuilt time.Time
}

// Scanner asks Trivy for its version and the database it holds, and hashes
// that database. Call it after a scan, when the database is in the cache.
func Scanner(ctx context.Context, opts TrivyOptions) (ScannerInfo, error) {
	bin, err := exec.LookPath(opts.Binary)
	if err != nil {
		return ScannerInfo{}, fmt.Errorf("finding trivy: %w", err)
	}
	cache := opts.CacheDir
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return ScannerInfo{}, fmt.Errorf("finding trivy's cache: %w", err)
		}
		cache = filepath.Join(dir, "trivy")
	}
	cmd := exec.CommandContext(ctx, bin, "version", "--format", "json", "--cache-dir", cache)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return ScannerInfo{}, fmt.Errorf("trivy version: %w: %s", err, tail(stderr.Bytes(), 2048))
	}
	info, err := parseVersion(out)
	if err != nil {
		return ScannerInfo{}, err
	}
	db := filepath.Join(cache, "db", "trivy.db")
	f, err := os.Open(db)
	if err != nil {
		return ScannerInfo{}, fmt.Errorf("hashing trivy's database: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ScannerInfo{}, fmt.Errorf("hashing %s: %w", db, err)
	}
	info.DBDigest = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return info, nil
}

// parseVersion reads `trivy version --format json`.
func parseVersion(b []byte) (ScannerInfo, error) {
	var v struct {
		Version         string
		VulnerabilityDB *struct{ UpdatedAt time.Time }
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return ScannerInfo{}, fmt.Errorf("reading trivy version: %w", err)
	}
	if v.Version == "" {
		return ScannerInfo{}, errors.New("reading trivy version: no version")
	}
	if v.VulnerabilityDB == nil || v.VulnerabilityDB.UpdatedAt.IsZero() {
		return ScannerInfo{}, errors.New("trivy reports no vulnerability database: the scan cannot be recorded")
	}
	return ScannerInfo{Version: v.Version, DBBuilt: v.VulnerabilityDB.UpdatedAt.UTC()}, nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

package policy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// ScanImage runs Trivy on the image reference (by digest) and returns the
// path of the JSON report it wrote and the parsed report. Trivy's own exit
// code is not the verdict (Evaluate is); a Trivy failure is an error, and
// so is a report that does not parse.
func ScanImage(ctx context.Context, opts TrivyOptions, ref, name string) (string, *Report, error) {
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
		"--scanners", "vuln", "--image-src", "remote", "--pkg-types", "os,library",
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
	args = append(args, ref)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", nil, fmt.Errorf("scanning %s with trivy: %w: %s", ref, err, tail(stderr.Bytes(), 2048))
	}
	rep, err := ReadReport(out)
	if err != nil {
		return out, nil, fmt.Errorf("scanning %s: %w", ref, err)
	}
	return out, rep, nil
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// ScanSBOM runs Trivy on an SBOM file (`trivy sbom`) with the database in
// opts.CacheDir, always offline: it is the rescan of a release on the
// disconnected side, with the user's own database, and must never reach for
// the network whatever opts says. It returns the parsed report.
func ScanSBOM(ctx context.Context, opts TrivyOptions, sbomPath, name string) (*Report, error) {
	if opts.Binary == "" || opts.CacheDir == "" {
		return nil, errors.New("rescanning: a trivy binary and its cache directory (the offline database) are required")
	}
	bin, err := exec.LookPath(opts.Binary)
	if err != nil {
		return nil, fmt.Errorf("rescanning %s: finding trivy: %w", name, err)
	}
	if err := os.MkdirAll(opts.OutputDir, 0o755); err != nil {
		return nil, fmt.Errorf("rescanning %s: %w", name, err)
	}
	out := filepath.Join(opts.OutputDir, name+".trivy.json")
	_ = os.Remove(out) // a stale report from an earlier run must not be read
	args := []string{"sbom", "--quiet", "--format", "json", "--output", out, "--scanners", "vuln",
		"--cache-dir", opts.CacheDir, "--skip-db-update", "--skip-java-db-update", "--offline-scan",
		"--skip-version-check", "--disable-telemetry", sbomPath}
	return runTrivy(ctx, bin, args, out, "rescanning "+name)
}

package trivydb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/test/tools"
)

// ScanOptions configures Scan.
type ScanOptions struct {
	// Trivy is the trivy binary; empty means the pinned one of
	// hack/tools/trivy, built on first use.
	Trivy string
	// DB is the database to scan with.
	DB *DB
	// Input is an OCI image layout directory. Trivy scans its first
	// top-level manifest, or the one named by a "@sha256:..." suffix; a
	// nested index yields its first child whatever the platform, so name a
	// platform image, not an index.
	Input string
	// Output is the path the JSON report is written to.
	Output string
}

// Scan runs `trivy image --input` offline against opts.DB and returns the
// report as the release gate parses it.
func Scan(ctx context.Context, opts ScanOptions) (*gate.Report, error) {
	if opts.DB == nil || opts.Input == "" || opts.Output == "" {
		return nil, errors.New("scanning with trivy: DB, Input and Output are required")
	}
	bin := opts.Trivy
	if bin == "" {
		var err error
		if bin, err = tools.Binary(ctx, tools.Trivy, "trivy"); err != nil {
			return nil, err
		}
	}
	_ = os.Remove(opts.Output)
	cmd := exec.CommandContext(ctx, bin, "image", "--quiet", "--format", "json", "--output", opts.Output,
		"--scanners", "vuln", "--pkg-types", "os,library",
		"--cache-dir", opts.DB.CacheDir, "--skip-db-update", "--skip-java-db-update", "--offline-scan",
		"--skip-version-check", "--disable-telemetry", "--input", opts.Input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("trivy image --input %s: %w\n%s", opts.Input, err, stderr.String())
	}
	rep, err := gate.ReadReport(opts.Output)
	if err != nil {
		return nil, fmt.Errorf("trivy image --input %s: %w", opts.Input, err)
	}
	return rep, nil
}

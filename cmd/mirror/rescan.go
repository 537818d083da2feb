package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/release/scancheck"
	"github.com/reloader-dev/reloader/review"
)

// rescanHelp explains --rescan in verify's and import's --help.
const rescanHelp = `

--rescan runs YOUR Trivy (--trivy) on the SPDX SBOMs the release carries,
with YOUR offline database (--trivy-cache-dir: --skip-db-update
--offline-scan, never the network), and lists the findings that are new
since the release, i.e. not in its signed scan record: advisories published
after the release was cut. --fail-on-new HIGH,CRITICAL refuses the release
(exit 3, before anything is pushed) when one of them has those severities.`

// rescanExample is the --rescan example of command name.
func rescanExample(name string) string {
	target := ""
	if name == "import" {
		target = " --target harbor.corp.example/platform/reloader"
	}
	return `
  # disconnected side: rescan with the database you carried in yourself
  reloader-mirror ` + name + ` -f reloader-v1.2.3.tar.zst --key cosign.pub` + target + ` \
      --rescan --trivy /opt/trivy/trivy --trivy-cache-dir /opt/trivy/cache --fail-on-new HIGH,CRITICAL`
}

// rescanFlags are --rescan and its companions.
type rescanFlags struct {
	enabled         bool
	trivy, cacheDir string
	failOnNew       string
}

func (f *rescanFlags) register(c *cobra.Command) {
	c.Flags().BoolVar(&f.enabled, "rescan", false, "rescan the release's SBOMs with your Trivy and offline database and list findings new since the release")
	c.Flags().StringVar(&f.trivy, "trivy", "", "with --rescan: the trivy binary to run")
	c.Flags().StringVar(&f.cacheDir, "trivy-cache-dir", "", "with --rescan: trivy's cache directory holding your offline database")
	c.Flags().StringVar(&f.failOnNew, "fail-on-new", "", "with --rescan: refuse (exit 3) when a new finding has one of these severities, e.g. HIGH,CRITICAL")
	if c.Long == "" {
		c.Long = c.Short + "."
	}
	c.Long += rescanHelp + "\n" + cli.ScanPolicyHelp
	c.Example += rescanExample(c.Name())
}

// check refuses flags that do not go together, before anything is read.
func (f *rescanFlags) check() error {
	if !f.enabled {
		if f.trivy != "" || f.cacheDir != "" || f.failOnNew != "" {
			return cli.Usage(errors.New("--trivy, --trivy-cache-dir and --fail-on-new need --rescan"))
		}
		return nil
	}
	if f.trivy == "" || f.cacheDir == "" {
		return cli.Usage(errors.New("--rescan needs --trivy and --trivy-cache-dir (your offline database)"))
	}
	if _, err := scancheck.ParseSeverities(f.failOnNew); err != nil {
		return cli.Usage(fmt.Errorf("--fail-on-new: %w", err))
	}
	return nil
}

// rescan runs the rescan when asked, on the release the command verified
// (so it is verified once): it scans each SPDX SBOM of the lock offline,
// read from where the release was verified, and reports what is new, to
// stderr so stdout stays the command's own output.
func (g *command) rescan(ctx context.Context, prep *mirror.Verified, f *rescanFlags) error {
	if !f.enabled {
		return nil
	}
	failOn, err := scancheck.ParseSeverities(f.failOnNew)
	if err != nil {
		return cli.Usage(fmt.Errorf("--fail-on-new: %w", err))
	}
	work, err := os.MkdirTemp(g.workDir, "reloader-rescan-")
	if err != nil {
		return fmt.Errorf("rescanning: %w", err)
	}
	defer os.RemoveAll(work)
	topts := gate.TrivyOptions{Binary: f.trivy, CacheDir: f.cacheDir, SkipDBUpdate: true, OutputDir: work}
	reports := map[string]*gate.Report{}
	for i, a := range prep.Lock.Artifacts {
		if a.Kind != release.KindSBOM || a.ArtifactType != review.MediaTypeSPDX {
			continue
		}
		data, err := prep.Document(ctx, a, review.MaxSBOMBytes)
		if err != nil {
			return err
		}
		what := strings.TrimSpace(a.Name + " " + a.Platform)
		file := filepath.Join(work, fmt.Sprintf("sbom-%d.spdx.json", i))
		if err := os.WriteFile(file, data, 0o600); err != nil {
			return fmt.Errorf("rescanning %s: %w", what, err)
		}
		rep, err := gate.ScanSBOM(ctx, topts, file, fmt.Sprintf("sbom-%d", i))
		if err != nil {
			return err
		}
		reports[what] = rep
	}
	if len(reports) == 0 {
		return fmt.Errorf("%w: rescanning release %s: the lock lists no SPDX SBOM to scan", scancheck.ErrRefused, prep.Lock.Version)
	}
	res := scancheck.NewSince(prep.Lock, reports)
	writeRescan(g, prep.Lock.Version, len(reports), res)
	return res.FailOn(prep.Lock.Version, failOn)
}

func writeRescan(g *command, version string, n int, res scancheck.Rescan) {
	w := g.stderr
	fmt.Fprintf(w, "rescan of %s: %d SBOM(s) scanned offline, %d finding(s) new since the release\n", version, n, len(res.New))
	if !res.RecordHasFindings {
		fmt.Fprintln(w, "  note: the release's scan record lists no findings (an older lock), so every finding counts as new")
	}
	for _, f := range res.New {
		fmt.Fprintf(w, "  NEW %-8s %-18s %s %s (fixed: %s) in %s\n", f.Severity, f.ID, f.Package, f.InstalledVersion, dashIfEmpty(f.FixedVersion), strings.Join(f.Images, ", "))
	}
}

func dashIfEmpty(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

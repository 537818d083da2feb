package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/local"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/gate"
)

type localFlags struct {
	out, main, stamp, registry, key, ubiBase, trivy, trivyCache, trivyDB, policy, version, commit, license string
	skipDBUpdate, noCharts, noScan                                                                         bool
	platforms                                                                                              []string
	output                                                                                                 cli.Output
	// support is the support table the release ships.
	support string
}

func newLocalCmd() *cobra.Command {
	f := &localFlags{}
	c := &cobra.Command{
		Use:   "local",
		Short: "Run the whole release against a loopback registry with a generated key",
		Long: `local runs the complete release pipeline on this machine: it starts an OCI
registry on 127.0.0.1 (or uses --registry), generates a cosign key under
<out>/keys, builds a stand-in UBI base unless --ubi-base is given, builds
the images (reloader, reloader-ubi and their -fips builds: the controller
compiled with GOFIPS140=certified, GODEBUG=fips140=only in the image),
scans them in a local OCI layout, and only if the gate passes pushes,
signs, verifies and prints the release lock.

A release without a scan needs --no-scan: its lock and versions page say it
is unscanned, and reloader-mirror refuses it unless --allow-unscanned is given.
Such a release is for trying the pipeline, never for publishing.` + cli.ExitCodesHelp,
		Example: `  # what "make release-local" runs without trivy
  reloader-release local --out _out/release --no-scan

  # only linux/amd64, for a quick try
  reloader-release local --out _out/release --no-scan --platforms linux/amd64

  # with the vulnerability gate, trivy's DB already in a cache directory
  reloader-release local --out _out/release --trivy trivy --trivy-cache-dir ~/.cache/trivy --skip-db-update

  # timings and image sizes for a script
  reloader-release local --out _out/release --output json | jq .steps`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLocal(cmd, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.out, "out", "_out/release", "output directory (lock, bundle, SBOMs, page, keys)")
	fl.StringVar(&f.main, "main", "./cmd/reloader", "the controller's main package")
	fl.StringVar(&f.stamp, "stamp-package", "", "package holding Version/Commit/Date (default the controller's buildinfo)")
	fl.StringVar(&f.registry, "registry", "", "use this registry host instead of starting one (loopback only)")
	fl.StringVar(&f.key, "key", "", "signing key: a cosign private key file (password from COSIGN_PASSWORD) or a pkcs11: or KMS URI, see publish --help (default: generate one)")
	fl.StringVar(&f.ubiBase, "ubi-base", "", "UBI base index as name@sha256:... (default: a generated stand-in)")
	fl.StringVar(&f.trivy, "trivy", "", "trivy binary (default: trivy in PATH)")
	fl.BoolVar(&f.noScan, "no-scan", false, "release without a vulnerability scan; the lock marks the release unscanned")
	fl.StringSliceVar(&f.platforms, "platforms", nil, "only these platforms, e.g. linux/amd64,linux/arm64 (default: all Reloader ships)")
	fl.StringVar(&f.trivyCache, "trivy-cache-dir", "", "trivy cache directory (vulnerability DB)")
	fl.StringVar(&f.trivyDB, "trivy-db-repository", "", "OCI repository of the trivy DB")
	fl.BoolVar(&f.skipDBUpdate, "skip-db-update", false, "use the trivy DB in the cache directory, never download")
	fl.StringVar(&f.policy, "policy", "", "release policy file (default: the built-in one, which reloader-release gate --print-policy prints)")
	// The default is a pre-release of the first series the project's
	// support table lists: the pipeline refuses a series it does not list.
	fl.StringVar(&f.version, "version", "v1.0.0-local", "version to stamp and tag; its series must be listed in the support table")
	fl.StringVar(&f.support, "support", "", "support table the release ships, which must list the version's series (default release/support.yaml of the checkout)")
	fl.StringVar(&f.commit, "commit", "", "commit to record (default: git HEAD)")
	fl.StringVar(&f.license, "license-file", "LICENSE", "license text shipped under /licenses (skipped if missing)")
	fl.BoolVar(&f.noCharts, "no-charts", false, "do not package charts/*")
	f.output.AddFlags(c.Flags())
	return c
}

// runLocal turns the flags into pipeline options and runs the release on
// loopback. It stays whole: one straight mapping of flags to options, in
// the order the help lists them.
func runLocal(cmd *cobra.Command, f *localFlags) error {
	if err := f.output.Check(); err != nil {
		return err
	}
	if err := release.CheckVersion(f.version); err != nil {
		return cli.Usage(fmt.Errorf("--version: %w", err))
	}
	ctx := cmd.Context()
	created, err := sourceDateEpoch(".")
	if err != nil {
		return err
	}
	commit := f.commit
	if commit == "" {
		if commit, err = headCommit("."); err != nil {
			return err
		}
	}
	platforms, err := pipeline.ParsePlatforms(f.platforms)
	if err != nil {
		return cli.Usage(fmt.Errorf("--platforms: %w", err))
	}
	trivy := f.trivy
	switch {
	case f.noScan && trivy != "":
		return cli.Usage(errors.New("--trivy and --no-scan: choose one"))
	case !f.noScan && trivy == "":
		p, err := exec.LookPath("trivy")
		if err != nil {
			return cli.Usage(errors.New("no trivy in PATH: give --trivy, or --no-scan to release unscanned"))
		}
		trivy = p
	}
	license := f.license
	if _, err := os.Stat(license); err != nil {
		license = ""
	}
	var charts []string
	if !f.noCharts {
		charts = findCharts(".")
	}
	logw := cmd.ErrOrStderr()
	warnPIN(cmd, f.key)
	res, err := local.Run(ctx, local.Options{
		MainPackage: f.main, StampPackage: f.stamp, OutDir: f.out, Registry: f.registry,
		KeyPath: f.key, KeyPassword: []byte(os.Getenv("COSIGN_PASSWORD")), UBIBase: f.ubiBase,
		Trivy:  gate.TrivyOptions{Binary: trivy, CacheDir: f.trivyCache, DBRepository: f.trivyDB, SkipDBUpdate: f.skipDBUpdate},
		NoScan: f.noScan, Platforms: platforms,
		PolicyPath: f.policy, SupportFile: f.support, Version: f.version, Commit: commit, Created: created, ChartDirs: charts,
		LicenseFile: license, Log: logw,
	})
	if err != nil {
		return err
	}
	if f.output.JSON() {
		return cli.WriteJSON(cmd.OutOrStdout(), summary(res))
	}
	data, err := os.ReadFile(res.LockPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(logw, "==> done in %s; lock %s, signature bundle %s, public key %s\n", res.Total.Round(time.Millisecond), res.LockPath, res.BundlePath, res.PublicKey)
	for _, k := range sortedKeys(res.ImageSizes) {
		fmt.Fprintf(logw, "    image size %-22s %8.2f MiB\n", k, float64(res.ImageSizes[k])/(1<<20))
	}
	_, err = cmd.OutOrStdout().Write(data)
	return err
}

type stepJSON struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

func summary(res *local.Result) any {
	var steps []stepJSON
	for _, s := range res.Steps {
		steps = append(steps, stepJSON{s.Name, s.Duration.Seconds()})
	}
	return map[string]any{
		"lock": res.Lock, "lockPath": res.LockPath, "bundlePath": res.BundlePath, "publicKeyPath": res.PublicKey,
		"registry": res.Registry, "standInUBIBase": res.StandInUBI, "steps": steps,
		"totalSeconds": res.Total.Seconds(), "imageSizes": res.ImageSizes, "gate": res.Gate,
	}
}

func sortedKeys(m map[string]int64) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// findCharts lists chart directories under <dir>/charts.
func findCharts(dir string) []string {
	ms, _ := filepath.Glob(filepath.Join(dir, "charts", "*", "Chart.yaml"))
	var out []string
	for _, m := range ms {
		out = append(out, filepath.Dir(m))
	}
	sort.Strings(out)
	return out
}

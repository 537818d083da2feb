package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

const exitCodesHelp = `
Exit codes:
  0  success
  1  a check failed (vulnerability gate, signature or digest verification)
  2  usage error (flags, arguments, unreadable policy or key)
  3  the pipeline could not run (build, registry, I/O)`

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "reloader-release",
		Short: "Build, scan, sign, verify and publish a Reloader release",
		Long: `reloader-release produces a Reloader release without Docker: reproducible
images for the standard (scratch) and UBI variants, SBOMs attached as signed
in-toto attestations, a Trivy vulnerability gate, cosign signatures, Helm
charts as OCI artifacts, and the signed release lock (reloader-release.json)
that lists every artifact by digest.` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newLocalCmd(), newPublishCmd(), newVerifyCmd(), newGateCmd(), newPageCmd())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	for _, c := range root.Commands() {
		if c.Args != nil {
			c.Args = usageArgs(c.Args)
		}
	}
	return root
}

// outputFlag is --output text|json.
type outputFlag struct{ format string }

func (o *outputFlag) register(c *cobra.Command) {
	c.Flags().StringVarP(&o.format, "output", "o", "text", "output format: text or json (for scripts)")
}

func (o *outputFlag) check() error {
	if o.format != "text" && o.format != "json" {
		return usageError{fmt.Errorf("--output must be text or json, not %q", o.format)}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH, or falls back to the commit
// time of HEAD in dir, so a rebuild of a commit gets the same timestamps.
func sourceDateEpoch(dir string) (time.Time, error) {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, usageError{fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a Unix time", s)}
		}
		return time.Unix(n, 0).UTC(), nil
	}
	out, err := git(dir, "log", "-1", "--format=%ct")
	if err != nil {
		return time.Time{}, usageError{errors.New("SOURCE_DATE_EPOCH is not set and the commit time of HEAD is unknown")}
	}
	n, err := strconv.ParseInt(out, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the commit time: %w", err)
	}
	return time.Unix(n, 0).UTC(), nil
}

func headCommit(dir string) (string, error) {
	out, err := git(dir, "rev-parse", "HEAD")
	if err != nil {
		return "", usageError{fmt.Errorf("finding the commit to release (give --commit): %w", err)}
	}
	return out, nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// usageArgs makes argument-count errors usage errors (exit 2).
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

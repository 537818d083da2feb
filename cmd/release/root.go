package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
)

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "reloader-release",
		Short: "Build, scan, sign, verify and publish a Reloader release",
		Long: `reloader-release produces a Reloader release without Docker: reproducible
images for the standard (scratch) and UBI variants, SBOMs attached as signed
in-toto attestations, a Trivy vulnerability gate, cosign signatures, Helm
charts as OCI artifacts, and the signed release lock (reloader-release.json)
that lists every artifact by digest.` + cli.ExitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newLocalCmd(), newBuildCmd(), newPublishCmd(), newVerifyCmd(), newGateCmd(), newPageCmd(), newRebuildCmd(), newPublicKeyCmd())
	cli.Wire(root)
	return root
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH, or falls back to the commit
// time of HEAD in dir, so a rebuild of a commit gets the same timestamps.
func sourceDateEpoch(dir string) (time.Time, error) {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, cli.Usage(fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a Unix time", s))
		}
		return time.Unix(n, 0).UTC(), nil
	}
	out, err := git(dir, "log", "-1", "--format=%ct")
	if err != nil {
		return time.Time{}, cli.Usage(errors.New("SOURCE_DATE_EPOCH is not set and the commit time of HEAD is unknown"))
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
		return "", cli.Usage(fmt.Errorf("finding the commit to release (give --commit): %w", err))
	}
	return out, nil
}

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"

	"github.com/reloader-dev/reloader/publish/build"
)

// GoBuild builds the repository's package pkg ("./cmd/reloader") into out
// with the extra go build flags given (-race), so end-to-end tests run the
// real binary. It is the one place tests compile this repository's
// commands; a release-shaped binary (trimmed, stamped, cross-built) comes
// from publish/build instead.
func GoBuild(ctx context.Context, pkg, out string, flags ...string) error {
	return GoBuildEnv(ctx, nil, pkg, out, flags...)
}

// GoBuildEnv is GoBuild with variables added to go build's environment
// (GOFIPS140=certified for the FIPS flavour).
func GoBuildEnv(ctx context.Context, env []string, pkg, out string, flags ...string) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	// Static and with the release builds' flags, as the tool sets and the
	// plain tests compile (see the Makefile's PLAIN_ENV), so the Go build
	// cache shares those compiles whichever phase asks; only -race needs
	// cgo, and its instrumented compiles share nothing anyway. The caller's
	// flags come after them and win (a -tags must repeat build.Tags).
	if !slices.Contains(flags, "-race") {
		flags = append(build.Flags(), flags...)
		env = append([]string{"CGO_ENABLED=0"}, env...)
	}
	args := append(append([]string{"build"}, flags...), "-o", out, pkg)
	build := exec.CommandContext(ctx, "go", args...)
	build.Dir = root
	if len(env) > 0 {
		build.Env = append(os.Environ(), env...)
	}
	if msg, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %w\n%s", pkg, err, msg)
	}
	return nil
}

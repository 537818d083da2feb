// Command reloader-release builds, scans, signs, verifies and publishes a
// Reloader release. See `reloader-release --help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRoot().ExecuteContext(ctx)
	stop()
	os.Exit(cli.Report("reloader-release", err, os.Stderr))
}

// Command reloader is the controller: it rolls workloads when the ConfigMaps
// and Secrets they use change. See controller/app for its flags.
//
// Installed (or linked) as kubectl-reloader, it is the kubectl plugin
// `kubectl reloader` and offers only the read-only subcommands (explain).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	// Change windows name IANA time zones (CRON_TZ=Europe/Berlin); minimal
	// and distroless images carry no zoneinfo, so the binary brings its own.
	_ "time/tzdata"

	"github.com/reloader-dev/reloader/controller/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cmd, prefix := app.NewCommand(), "reloader:"
	if app.IsPlugin(os.Args[0]) {
		cmd, prefix = app.NewPluginCommand(), "kubectl reloader:"
	}
	err := cmd.ExecuteContext(ctx)
	stop()
	if err != nil {
		if msg := err.Error(); msg != "" {
			fmt.Fprintln(os.Stderr, prefix, msg)
		}
		os.Exit(app.ExitCode(err))
	}
}

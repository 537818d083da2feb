// Command reloader is the controller: it rolls workloads when the ConfigMaps
// and Secrets they use change. See controller/app for its flags.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/reloader-dev/reloader/controller/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.NewCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "reloader:", err)
		os.Exit(1)
	}
}

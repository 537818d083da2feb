// Command reloader-release builds, scans, signs, verifies and publishes a
// Reloader release. See `reloader-release --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes. Scripts rely on them; keep them stable.
const (
	exitOK = 0
	// exitFailed: a check failed: the vulnerability gate, a signature or
	// digest verification. The release must not ship.
	exitFailed = 1
	// exitUsage: wrong flags or arguments, unreadable configuration.
	exitUsage = 2
	// exitError: the pipeline could not run (build, registry, I/O).
	exitError = 3
)

// checkFailed marks errors that are verdicts, not malfunctions.
type checkFailed struct{ err error }

func (c checkFailed) Error() string { return c.err.Error() }
func (c checkFailed) Unwrap() error { return c.err }

type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRoot().ExecuteContext(ctx)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode reports err on w and maps it to the documented exit code.
func exitCode(err error, w io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(w, "reloader-release:", err)
	var cf checkFailed
	var ue usageError
	switch {
	case errors.As(err, &cf):
		return exitFailed
	case errors.As(err, &ue):
		return exitUsage
	}
	return exitError
}

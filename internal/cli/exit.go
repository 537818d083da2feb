// Package cli holds what reloader-release and reloader-mirror share as
// command-line programs: one exit-code table, classified by error type,
// never by error text, and the cobra wiring that makes every usage mistake
// a usage error.
package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/release/scancheck"
	"github.com/reloader-dev/reloader/release/trust"
)

// Exit codes of both CLIs. Scripts rely on them; keep them stable.
const (
	// ExitOK: the command did what it was asked.
	ExitOK = 0
	// ExitError: the command could not run (build, registry, I/O).
	ExitError = 1
	// ExitUsage: wrong flags or arguments, an unreadable key, policy or
	// trusted root.
	ExitUsage = 2
	// ExitRefused: verification failed or the vulnerability gate refused;
	// nothing may be used or shipped.
	ExitRefused = 3
)

// ExitCodesHelp documents the table in --help.
const ExitCodesHelp = `
Exit codes:
  0  success
  1  error: the command could not run (build, registry, I/O)
  2  usage error (flags, arguments, unreadable policy, key or trusted root)
  3  refused: a signature, digest or archive did not verify, or the
     vulnerability gate failed`

// UsageError marks a mistake in what the user gave.
type UsageError struct{ Err error }

func (u UsageError) Error() string { return u.Err.Error() }
func (u UsageError) Unwrap() error { return u.Err }

// Usage wraps err as a usage error.
func Usage(err error) error { return UsageError{err} }

// ExitCode maps err to the table. A refusal outranks a usage error: a
// trust verdict must never look like a typo to a script.
func ExitCode(err error) int {
	var ue UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, trust.ErrUntrusted), errors.Is(err, gate.ErrRefused), errors.Is(err, scancheck.ErrRefused):
		return ExitRefused
	case errors.As(err, &ue), errors.Is(err, trust.ErrPolicy):
		return ExitUsage
	}
	return ExitError
}

// Report prints err as "prog: err" and returns its exit code.
func Report(prog string, err error, w io.Writer) int {
	if err != nil {
		fmt.Fprintln(w, prog+":", err)
	}
	return ExitCode(err)
}

// Wire makes every usage mistake cobra detects a UsageError: bad flags,
// wrong argument counts, and unknown commands (cobra reports those only as
// text, so the root refuses arguments itself).
func Wire(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return UsageError{err} })
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return UsageError{fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())}
		}
		return nil
	}
	if root.RunE == nil && root.Run == nil {
		root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
	var wrap func(*cobra.Command)
	wrap = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Args != nil {
				sub.Args = usageArgs(sub.Args)
			}
			wrap(sub)
		}
	}
	wrap(root)
}

func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return UsageError{err}
		}
		return nil
	}
}

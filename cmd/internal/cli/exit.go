// Package cli holds what reloader-release and reloader-mirror share as
// command-line programs: the exit-code table (internal/exitcode, where each
// domain marks its own errors) as the CLIs print it, and the cobra wiring
// that makes every usage mistake a usage error.
package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/internal/exitcode"
)

// Exit codes of both CLIs, from the one table (internal/exitcode). Scripts
// rely on them; keep them stable.
const (
	// ExitOK: the command did what it was asked.
	ExitOK = int(exitcode.OK)
	// ExitError: the command could not run (build, registry, I/O).
	ExitError = int(exitcode.Error)
	// ExitUsage: wrong flags or arguments, an unreadable key, policy or
	// trusted root.
	ExitUsage = int(exitcode.Usage)
	// ExitRefused: verification failed or the vulnerability gate refused;
	// nothing may be used or shipped.
	ExitRefused = int(exitcode.Refused)
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

// ExitCode puts a usage error in its class of the table.
func (u UsageError) ExitCode() exitcode.Code { return exitcode.Usage }

// Usage wraps err as a usage error.
func Usage(err error) error { return UsageError{err} }

// ExitCode maps err to the table by the classes the domains marked their
// errors with (exitcode.Of): a refusal outranks a usage error, so a trust
// verdict never looks like a typo to a script.
func ExitCode(err error) int { return int(exitcode.Of(err)) }

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

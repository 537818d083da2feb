// Package exitcode is the one exit-code table of the project's commands
// (reloader-release, reloader-mirror, reloader explain and its kubectl
// plugin). Scripts branch on these codes, so they are stable.
//
// A domain marks its own errors with the class they belong to (the trust
// package its verdicts, the gate its refusals) and a command asks Of for the
// code. That keeps the dependency pointing from the domains to this table,
// never from the command-line plumbing up into the domains, and lets a code
// be decided by error type, never by error text.
package exitcode

import "errors"

// Code is a process exit code.
type Code int

const (
	// OK: the command did what it was asked.
	OK Code = 0
	// Error: the command could not run (build, registry, I/O, an
	// unreadable workload).
	Error Code = 1
	// Usage: wrong flags or arguments, an unreadable key, policy or
	// trusted root.
	Usage Code = 2
	// Refused: verification failed or a gate refused; nothing may be used
	// or shipped.
	Refused Code = 3
	// Pending: explain's verdict that a reload is due or blocked. It is an
	// answer, not a failure, and no error carries it.
	Pending Code = 4
)

// Coder is an error that knows its class.
type Coder interface{ ExitCode() Code }

// marked is an error with a class, comparable by identity so that a
// sentinel made with New works with errors.Is.
type marked struct {
	err  error
	code Code
}

func (m *marked) Error() string  { return m.err.Error() }
func (m *marked) Unwrap() error  { return m.err }
func (m *marked) ExitCode() Code { return m.code }

// New is a sentinel error of class c, for a domain's var ErrX = ... .
func New(c Code, text string) error { return &marked{errors.New(text), c} }

// Mark gives err the class c; a nil err stays nil.
func Mark(c Code, err error) error {
	if err == nil {
		return nil
	}
	return &marked{err, c}
}

// Of is err's exit code: OK for nil, Error for an error nobody marked.
// Where the tree holds several classes a refusal wins: a trust verdict
// must never look like a typo to a script, even when it is wrapped in a
// usage error. Otherwise the outermost class wins.
func Of(err error) Code {
	if err == nil {
		return OK
	}
	first, refused := Error, false
	found := false
	walk(err, func(e error) {
		c, ok := e.(Coder)
		if !ok {
			return
		}
		if c.ExitCode() == Refused {
			refused = true
		}
		if !found {
			first, found = c.ExitCode(), true
		}
	})
	if refused {
		return Refused
	}
	return first
}

// walk visits err and everything it wraps, depth first, outermost first,
// through both Unwrap() error and Unwrap() []error (errors.Join, fmt's %w
// given twice).
func walk(err error, visit func(error)) {
	for err != nil {
		visit(err)
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e, visit)
			}
			return
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return
		}
	}
}

package pipeline

import (
	"fmt"
	"strings"

	"github.com/reloader-dev/reloader/release/trust"
)

// CheckMainPackage accepts only a clean package path relative to the
// module root ("./cmd/reloader"): the value reaches `go build`'s argv, where
// "-toolexec=..." would run a program of the document's choosing and ".."
// or an absolute path would build code from outside the checkout.
func CheckMainPackage(p string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w: main package %q: %s; want a ./-relative package path such as ./cmd/reloader", trust.ErrUntrusted, p, why)
	}
	rest, ok := strings.CutPrefix(p, "./")
	switch {
	case p == "":
		return bad("empty")
	case strings.HasPrefix(p, "-"):
		return bad("looks like a command-line flag")
	case strings.HasPrefix(p, "/"):
		return bad("is an absolute path")
	case !ok || rest == "":
		return bad("does not start with ./ followed by a directory")
	}
	for _, seg := range strings.Split(rest, "/") {
		switch {
		case seg == "":
			return bad("has an empty path segment")
		case seg == "." || seg == "..":
			return bad("has a . or .. segment")
		case strings.HasPrefix(seg, "-"):
			return bad("has a segment starting with -")
		case strings.Trim(seg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != "":
			return bad("has characters outside [A-Za-z0-9._-] in a segment")
		}
	}
	return nil
}

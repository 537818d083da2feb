package exitcode_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/reloader-dev/reloader/internal/exitcode"
)

var (
	errRefused = exitcode.New(exitcode.Refused, "untrusted")
	errUsage   = exitcode.New(exitcode.Usage, "trust policy")
)

type usage struct{ error }

func (usage) ExitCode() exitcode.Code { return exitcode.Usage }
func (u usage) Unwrap() error         { return u.error }

func TestAnErrorsCodeIsTheClassItsDomainMarkedItWith(t *testing.T) {
	for name, c := range map[string]struct {
		err  error
		want exitcode.Code
	}{
		"no error":                          {nil, exitcode.OK},
		"an error nobody marked":            {errors.New("registry unreachable"), exitcode.Error},
		"a sentinel, wrapped":               {fmt.Errorf("verifying v1: %w", errRefused), exitcode.Refused},
		"a usage sentinel":                  {fmt.Errorf("loading: %w", errUsage), exitcode.Usage},
		"a marked error":                    {exitcode.Mark(exitcode.Usage, errors.New("bad flag")), exitcode.Usage},
		"a refusal inside a usage error":    {usage{fmt.Errorf("flag: %w", errRefused)}, exitcode.Refused},
		"a refusal joined to a usage error": {errors.Join(errUsage, errRefused), exitcode.Refused},
		"the outermost class otherwise":     {exitcode.Mark(exitcode.Usage, exitcode.Mark(exitcode.Error, errors.New("x"))), exitcode.Usage},
		"a refusal given twice to Errorf":   {fmt.Errorf("%w and %w", errors.New("io"), errRefused), exitcode.Refused},
	} {
		if got := exitcode.Of(c.err); got != c.want {
			t.Errorf("%s: Of(%v) = %d, want %d", name, c.err, got, c.want)
		}
	}
}

func TestAMarkedSentinelKeepsItsTextAndIdentity(t *testing.T) {
	err := fmt.Errorf("release v1: %w", errRefused)
	if !errors.Is(err, errRefused) {
		t.Error("errors.Is does not find the sentinel through a wrap")
	}
	if errRefused.Error() != "untrusted" {
		t.Errorf("the sentinel's text is %q", errRefused.Error())
	}
	if exitcode.Mark(exitcode.Usage, nil) != nil {
		t.Error("marking nil made an error")
	}
}

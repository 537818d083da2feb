package cli_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/release/gate"
	"github.com/reloader-dev/reloader/release/trust"
)

func TestExitCodesAreChosenByErrorTypeNotText(t *testing.T) {
	cases := map[string]struct {
		err  error
		want int
	}{
		"success":                              {nil, cli.ExitOK},
		"a failure that merely says signature": {errors.New("registry: signature service unavailable"), cli.ExitError},
		"usage":                                {cli.Usage(errors.New("--map: want SOURCE=TARGET")), cli.ExitUsage},
		"unusable trust policy":                {fmt.Errorf("loading: %w", trust.ErrPolicy), cli.ExitUsage},
		"untrusted, however wrapped":           {fmt.Errorf("import: %w", fmt.Errorf("lock: %w", trust.ErrUntrusted)), cli.ExitRefused},
		"gate refused":                         {fmt.Errorf("release v1: %w", gate.ErrRefused), cli.ExitRefused},
		"refusal outranks usage":               {cli.Usage(fmt.Errorf("x: %w", trust.ErrUntrusted)), cli.ExitRefused},
	}
	for name, c := range cases {
		if got := cli.ExitCode(c.err); got != c.want {
			t.Errorf("%s: ExitCode(%v) = %d, want %d", name, c.err, got, c.want)
		}
	}
}

func TestWireMakesCobraUsageMistakesUsageErrors(t *testing.T) {
	newRoot := func() *cobra.Command {
		root := &cobra.Command{Use: "tool", SilenceErrors: true, SilenceUsage: true}
		root.AddCommand(&cobra.Command{Use: "do", Args: cobra.NoArgs, RunE: func(*cobra.Command, []string) error { return nil }})
		cli.Wire(root)
		return root
	}
	for _, args := range [][]string{{"bogus"}, {"do", "extra"}, {"do", "--nope"}} {
		root := newRoot()
		root.SetArgs(args)
		root.SetOut(&bytes.Buffer{})
		if got := cli.ExitCode(root.Execute()); got != cli.ExitUsage {
			t.Errorf("tool %v: exit %d, want %d", args, got, cli.ExitUsage)
		}
	}
	root := newRoot()
	root.SetArgs([]string{"do"})
	if got := cli.ExitCode(root.Execute()); got != cli.ExitOK {
		t.Errorf("tool do: exit %d", got)
	}
}

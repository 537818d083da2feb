package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release/support"
)

// A release whose series the support table it ships does not list is
// refused before anything is built: every consumer would refuse it. The
// refusal is exit 3 naming the version, the series and the table.
func TestLocalRefusesToCutAReleaseWhoseSeriesItsSupportTableDoesNotList(t *testing.T) {
	table := releasetest.SupportTableFile(t, "v1.0.0", "v1.1.0")
	out := t.TempDir()
	code, msg := run(t, "local", "--out", out, "--no-scan", "--no-charts", "--platforms", "linux/amd64",
		"--version", "v1.3.0", "--support", table, "--commit", strings.Repeat("a", 40))
	if code != cli.ExitRefused || !strings.Contains(msg, "release v1.3.0: series v1.3 is not listed in the support table the release ships ("+table+")") {
		t.Errorf("local --version v1.3.0 with a table listing v1.1 and v1.0: exit %d, want %d naming the version, the series and the table:\n%s",
			code, cli.ExitRefused, msg)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "keys" {
			t.Errorf("the refused release wrote %s to --out: it must be refused before building", e.Name())
		}
	}
}

// make release-local cuts the default version with the checkout's table,
// so the default must be of a series that table lists.
func TestLocalDefaultVersionIsOfASeriesTheCheckoutSupports(t *testing.T) {
	tab, err := support.ReadTable(filepath.Join("..", "..", "release", "support.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	v := newLocalCmd().Flags().Lookup("version").DefValue
	if _, ok := tab.SeriesOf(v); !ok {
		t.Errorf("reloader-release local's default --version %s is of no series release/support.yaml lists", v)
	}
}

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
)

// Each command declares the flag groups it takes on itself (issue 48): the
// root carries none, every command takes a release (registry, source,
// judgment), and only the commands that move bytes take the transfer flags.
func TestEachCommandDeclaresItsOwnFlagGroups(t *testing.T) {
	root := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	if root.PersistentFlags().HasFlags() {
		t.Errorf("the root declares persistent flags; each command declares its own")
	}
	release := []string{"ca-file", "plain-http", "lock", "lock-ref", "work-dir", "key", "certificate-identity", "allow-unscanned", "max-scan-age", "advisories", "expect-version"}
	transfer := []string{"retries", "receipt", "allow-downgrade"}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			path := sub.CommandPath()
			for _, f := range release {
				if sub.Flags().Lookup(f) == nil {
					t.Errorf("%s does not declare --%s", path, f)
				}
			}
			moves := sub.Name() == "copy" || sub.Name() == "import"
			for _, f := range transfer {
				if (sub.Flags().Lookup(f) != nil) != moves {
					t.Errorf("%s: --%s declared: %v, want %v (only copy and import push)", path, f, !moves, moves)
				}
			}
			walk(sub)
		}
	}
	walk(root)
	// policy writes YAML, and its -f lists the releases it approves.
	policy, _, _ := root.Find([]string{"policy"})
	if f := policy.Flags().Lookup("output"); f == nil || f.Shorthand != "" {
		t.Errorf("policy --output should be its output directory, with no -o shorthand: %+v", f)
	}
	if f := policy.Flags().Lookup("file"); f == nil || !strings.Contains(f.Usage, "approve") {
		t.Errorf("policy -f should list the releases it approves: %+v", f)
	}
}

// Scripts written when the flags were the root's put them before the
// command; they still run, and a flag the command does not take is refused
// by name.
func TestFlagsGivenBeforeTheCommandStillApply(t *testing.T) {
	for _, args := range [][]string{
		{"--lock", "/nonexistent/reloader-release.json", "verify", "--key", "cosign.pub"},
		{"--key", "cosign.pub", "--lock", "/nonexistent/reloader-release.json", "policy", "check", "--target", "harbor.example/r"},
		{"--insecure", "--lock=/nonexistent/reloader-release.json", "values", "--key", "cosign.pub", "--target", "harbor.example/r"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), args, &out, &errb)
		if code != cli.ExitUsage || !strings.Contains(errb.String(), "--lock /nonexistent/reloader-release.json: no such file") {
			t.Errorf("%q: exit %d, want %d reading the --lock given before the command:\n%s", args, code, cli.ExitUsage, errb.String())
		}
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"--concurrency", "8", "verify", "--lock", "x"}, &out, &errb)
	if code != cli.ExitUsage || !strings.Contains(errb.String(), "unknown flag: --concurrency") {
		t.Errorf("verify takes no --concurrency: exit %d:\n%s", code, errb.String())
	}
}

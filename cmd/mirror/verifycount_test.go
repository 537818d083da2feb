package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release/trust"
)

// runCounting runs the CLI and returns what its verifiers verified.
func runCounting(t *testing.T, args ...string) (int, string, []trust.Verification) {
	t.Helper()
	var out, errb bytes.Buffer
	g := &app{stdout: &out, stderr: &errb}
	root := g.root()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	code := cli.Report("reloader-mirror", root.ExecuteContext(context.Background()), &errb)
	return code, errb.String(), g.verifiers.verifications()
}

// tally counts verifications by what and version ("lock v1.1.0": 1).
func tally(vs []trust.Verification) map[string]int {
	n := map[string]int{}
	for _, v := range vs {
		n[v.What+" "+v.Version]++
	}
	return n
}

// Each command verifies each release it touches once: the lock's signature
// once, and every signature the lock lists once where the release is read
// from. copy and import verify the copy they wrote too, at the target, before
// any tag: that is a second place, not a second verification of the first.
// A release admitted beside the one given (--keep-previous) is verified as
// completely as the one given, once.
func TestEachCommandVerifiesEachReleaseOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, dst := startRegistry(t), startRegistry(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "cosign.pub")
	if err := os.WriteFile(key, s.PublicKeyPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	target := dst.Host + "/platform/reloader"
	trustFlags := []string{"--key", key, "--allow-unscanned", "--allow-no-provenance"}
	var rels []*releasetest.Release
	for i, version := range []string{"v1.0.0", "v1.1.0"} {
		rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: uint64(71 + i), Version: version})
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, rel)
	}
	for _, rel := range rels {
		if code, errs, _ := runCounting(t, append([]string{"copy", "--lock-ref", rel.LockRef, "--target", target}, trustFlags...)...); code != cli.ExitOK {
			t.Fatalf("copy: exit %d: %s", code, errs)
		}
	}
	v11 := rels[1].LockRef
	archive := filepath.Join(dir, "v1.1.0.tar")
	atTarget := target + "/reloader-release:v1.1.0"
	other := func() string { return startRegistry(t).Host + "/mirror" }

	cases := []struct {
		name string
		args []string
		want map[string]int
	}{
		{"plan", []string{"plan", "--lock-ref", v11, "--target", target}, map[string]int{"lock v1.1.0": 1, "release v1.1.0": 1}},
		{"copy", []string{"copy", "--lock-ref", v11, "--target", other()}, map[string]int{"lock v1.1.0": 1, "release v1.1.0": 2}},
		{"export", []string{"export", "--lock-ref", v11, "--to", archive}, map[string]int{"lock v1.1.0": 1, "release v1.1.0": 1}},
		{"import", []string{"import", "-f", archive, "--target", other()}, map[string]int{"lock v1.1.0": 1, "release v1.1.0": 2}},
		{"verify", []string{"verify", "--lock-ref", atTarget, "--target", target}, map[string]int{"lock v1.1.0": 1, "release v1.1.0": 1}},
		{"values", []string{"values", "--lock-ref", atTarget, "--target", target}, map[string]int{"lock v1.1.0": 1, "release v1.1.0": 1}},
		{"policy", []string{"policy", "--lock-ref", atTarget, "--target", target, "--format", "vap"}, map[string]int{"lock v1.1.0": 1, "release v1.1.0": 1}},
		{"policy --keep-previous", []string{"policy", "--lock-ref", atTarget, "--target", target, "--format", "vap", "--keep-previous", "1"},
			map[string]int{"lock v1.1.0": 1, "release v1.1.0": 1, "lock v1.0.0": 1, "release v1.0.0": 1}},
		{"review", []string{"review", "-f", archive, "--out", filepath.Join(dir, "review")}, map[string]int{"lock v1.1.0": 1, "release v1.1.0": 1}},
	}
	for _, c := range cases {
		code, errs, vs := runCounting(t, append(c.args, trustFlags...)...)
		if code != cli.ExitOK {
			t.Errorf("%s: exit %d: %s", c.name, code, errs)
			continue
		}
		if got := tally(vs); !equalCounts(got, c.want) {
			t.Errorf("%s verified %s, want %s", c.name, show(got), show(c.want))
		}
		for _, v := range vs {
			if !v.OK {
				t.Errorf("%s: a verification failed and the command still succeeded: %+v", c.name, v)
			}
		}
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func show(m map[string]int) string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s x%d", k, v))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

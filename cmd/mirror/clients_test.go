package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/test/tools"
)

// clientsVerify runs the real cosign CLI, both majors users install (the
// pinned v2 and v3), as a release's versions page tells users to: every `cosign verify` and
// `cosign verify-attestation` on it, plus the SBOM and provenance
// attestations of every image and index with the page's own flags; first
// against the release registry, then against a copy made by
// `reloader-mirror copy` (copyArgs: the lock and the trust flags). crane then validates
// the copy. They run as on an air-gapped machine: any connection other than
// to loopback goes to a proxy that refuses it.
//
// files maps the file names the page uses (cosign.pub, trusted_root.json) to
// the test's copies; extra are flags the test's own Sigstore needs.
//
// (cosign switches to the Sigstore bundle format when a subject has any
// bundle referrer, and then refuses --key without a trusted root: a
// key-signed release once broke every command on its page that way.)
func clientsVerify(t *testing.T, ctx context.Context, l *release.Lock, page []byte, files map[string]string, extra []string, copyArgs ...string) {
	t.Helper()
	crane, err := tools.Binary(ctx, tools.Clients, "crane")
	if err != nil {
		t.Fatal(err)
	}
	attested := map[string]bool{}
	for _, a := range l.Artifacts {
		if a.Kind == release.KindImage || a.Kind == release.KindImageIndex {
			attested[a.Repository+"@"+a.Digest] = true
		}
	}
	// Both cosign majors users install run the page's commands as written:
	// v3 still accepts v2's --new-bundle-format (deprecated, it is v3's
	// default), so the page needs no commands of its own for v3.
	commands := pageCommands(t, page, attested)
	clients := []struct{ major, cosign string }{{major: "v2"}, {major: "v3"}}
	for i, set := range []tools.Set{tools.Clients, tools.Clients3} {
		if clients[i].cosign, err = tools.Binary(ctx, set, "cosign"); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "TUF_ROOT="+filepath.Join(home, "tuf"), "DOCKER_CONFIG="+home,
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost")
	run := func(bin string, args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
		}
	}
	cosignRun := func(cosign string, c []string, ref string) {
		t.Helper()
		args := slices.Clone(c[:len(c)-1])
		for i, a := range args {
			if p, ok := files[a]; ok {
				args[i] = p
			}
		}
		run(cosign, append(append(args, extra...), ref)...)
	}
	for _, cl := range clients {
		for _, c := range commands {
			cosignRun(cl.cosign, c, c[len(c)-1])
		}
	}

	dst := startRegistry(t)
	target := dst.Host + "/platform"
	args := append([]string{"copy", "--allow-unscanned", "--target", target}, copyArgs...)
	if code, _, errs := runCLI(t, args...); code != cli.ExitOK {
		t.Fatalf("reloader-mirror %s: exit %d: %s", strings.Join(args, " "), code, errs)
	}
	m, err := mirror.NewMapping(target, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	mirrored := func(ref string) string {
		repo, digest, _ := strings.Cut(ref, "@")
		return m.Repository(repo) + "@" + digest
	}
	for _, cl := range clients {
		for _, c := range commands {
			cosignRun(cl.cosign, c, mirrored(c[len(c)-1]))
		}
	}
	// crane, which many users inspect a registry with, finds every mirrored
	// image and index well-formed (each layer read back and digested).
	for ref := range attested {
		run(crane, "validate", "--remote", mirrored(ref))
	}
	t.Logf("cosign v2 and v3 each ran %d commands at the source and on the mirrored copy; crane validated %d mirrored images and indexes",
		len(commands), len(attested))
}

// pageCommands are the cosign commands of the versions page, and for every
// image and index it verifies also its SBOM and provenance attestations
// with the page's own flags.
func pageCommands(t *testing.T, page []byte, attested map[string]bool) [][]string {
	t.Helper()
	var commands [][]string
	seen := map[string]bool{}
	for _, line := range strings.Split(string(page), "\n") {
		_, cmd, ok := strings.Cut(line, "`cosign ")
		if !ok {
			continue
		}
		cmd, _, _ = strings.Cut(cmd, "`")
		f := strings.Fields(cmd)
		commands, seen[cmd] = append(commands, f), true
		if f[0] != "verify" || !attested[f[len(f)-1]] {
			continue
		}
		for _, typ := range []string{"slsaprovenance1", "spdxjson", "cyclonedx"} {
			att := append([]string{"verify-attestation", "--type", typ}, f[1:]...)
			if k := strings.Join(att, " "); !seen[k] {
				commands, seen[k] = append(commands, att), true
			}
		}
	}
	if len(commands) < 10 {
		t.Fatalf("the versions page gives %d cosign commands, want every image, index and chart:\n%s", len(commands), page)
	}
	return commands
}

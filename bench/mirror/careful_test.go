package mirror_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/test/tools"
)

// careful is the careful user's pipeline, the mirror's peer (#53): crane
// verifies nothing, so a user who copies a signed release carefully first
// runs the release page's `cosign verify` on every image, index and chart,
// and `cosign verify-attestation` for the provenance and both SBOMs of
// every image and index, with the cosign v3 CLI, and then copies every
// artifact of the lock with the crane CLI (`cosign copy` is deprecated,
// sigstore/cosign #4681). The verifications run -mirror.concurrency at a
// time (as `xargs -P` would), the copies one artifact after the other with
// `crane copy --jobs` of the same number, as the crane.Copy contestant does.
type careful struct {
	cosign, crane string
	// key is the release's public key, as the page names it (cosign.pub).
	key string
	env []string
}

func newCareful(ctx context.Context, b *testing.B, pubPEM []byte) *careful {
	cosign, err := tools.Binary(ctx, tools.Clients3, "cosign")
	if err != nil {
		b.Fatal(err)
	}
	crane, err := tools.Binary(ctx, tools.Clients, "crane")
	if err != nil {
		b.Fatal(err)
	}
	home := b.TempDir()
	key := filepath.Join(home, "cosign.pub")
	if err := os.WriteFile(key, pubPEM, 0o600); err != nil {
		b.Fatal(err)
	}
	// As on an air-gapped machine: nothing but loopback is reachable, so
	// neither CLI spends time on a network it will not use.
	env := append(os.Environ(), "HOME="+home, "TUF_ROOT="+filepath.Join(home, "tuf"), "DOCKER_CONFIG="+home,
		"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost")
	return &careful{cosign: cosign, crane: crane, key: key, env: env}
}

// commands are the cosign commands of the release page for lock's images,
// indexes and charts, with the attestations of images and indexes.
func (c *careful) commands(l *release.Lock) [][]string {
	flags := []string{"--key", c.key, "--insecure-ignore-tlog=true"}
	var out [][]string
	for _, a := range l.Artifacts {
		ref := a.Repository + "@" + a.Digest
		switch a.Kind {
		case release.KindChart:
			out = append(out, append(append([]string{"verify"}, flags...), ref))
		case release.KindImage, release.KindImageIndex:
			out = append(out, append(append([]string{"verify"}, flags...), ref))
			for _, typ := range []string{"slsaprovenance1", "spdxjson", "cyclonedx"} {
				out = append(out, append(append([]string{"verify-attestation", "--type", typ}, flags...), ref))
			}
		}
	}
	return out
}

func (c *careful) run(ctx context.Context, bin string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = c.env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return nil
}

// verify runs every command, -mirror.concurrency at a time.
func (c *careful) verify(ctx context.Context, l *release.Lock) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(*concurrency)
	for _, cmd := range c.commands(l) {
		g.Go(func() error { return c.run(gctx, c.cosign, cmd...) })
	}
	return g.Wait()
}

// copy is `crane copy` of one artifact by digest.
func (c *careful) copy(ctx context.Context, a release.Artifact, target string) error {
	return c.run(ctx, c.crane, "copy", "--jobs", strconv.Itoa(*concurrency), a.Repository+"@"+a.Digest, target)
}

// runCareful times the pipeline into a fresh registry, then again into the
// now complete one (its no-op: every verification again, and crane asking
// for every artifact).
func (bn *bench) runCareful(b *testing.B, r *runs) {
	dst, stop := start(b)
	defer stop()
	once := func() time.Duration {
		t0 := time.Now()
		if err := bn.careful.verify(bn.ctx, bn.rel.Lock); err != nil {
			b.Fatal(err)
		}
		everyArtifact(b, bn.rel, dst.Host, func(a release.Artifact, target string) error { return bn.careful.copy(bn.ctx, a, target) })
		return time.Since(t0)
	}
	r.careful = append(r.careful, once())
	r.carefulNoop = append(r.carefulNoop, once())
}

// sha256sumFloor times coreutils' `sha256sum -c` of the layout's
// checksums.sha256 in dir, the whole-archive check SECURITY.md promises
// every import makes: the import's no-op can be no faster.
func (bn *bench) sha256sumFloor(b *testing.B, r *runs, dir string) {
	cmd := exec.CommandContext(bn.ctx, "sha256sum", "--quiet", "-c", "checksums.sha256")
	cmd.Dir = dir
	t0 := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("sha256sum -c checksums.sha256 in %s: %v\n%s", dir, err, out)
	}
	r.sha256sum = append(r.sha256sum, time.Since(t0))
}

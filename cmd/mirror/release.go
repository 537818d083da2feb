package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// lockAndMapping is the verified release lock and its repositories mapped
// to the target (with --map overrides): what values, verify and policy
// start from.
func (g *command) lockAndMapping(in *releaseInput) (*release.Lock, *mirror.Mapping, error) {
	l := in.lock.Lock
	repos, err := g.repos()
	if err != nil {
		return nil, nil, err
	}
	m, err := mirror.NewMapping(g.target, l, repos)
	if err != nil {
		return nil, nil, err
	}
	return l, m, nil
}

// release is where the release is read from and its trust material.
type releaseInput struct {
	src                  mirror.Source
	lockJSON, lockBundle []byte
	// lock is the lock verified, once, when the release was opened: every
	// command works from it, never from the bytes again.
	lock     *mirror.SignedLock
	policy   trust.Policy
	verifier *trust.Verifier
	archive  *mirror.OpenedArchive
	close    func()
	// standing is what the advisories say about the release.
	standing *mirror.Standing
	// deltaMapping is set for a delta archive: where its base release is.
	deltaMapping *mirror.Mapping
	// vs makes the verifiers of this release and of those read beside it.
	vs *verifiers
	// advisories are the advisory sources read for this run, by where they
	// were read: each lock is verified once however many releases it judges.
	advisories map[string]*mirror.AdvisorySource
	// given names the release as the user gave it ("archive
	// reloader-v1.2.3.tar.zst"), never the directory it was unpacked into.
	given string
}

// open resolves --file, --lock or --lock-ref, and the trust policy. The
// archive's trusted material is used only where the user did not give their
// own, and the identity is always the user's.
func (g *command) open(ctx context.Context, c *registry.Client) (*releaseInput, error) {
	if err := g.out.Check(); err != nil {
		return nil, err
	}
	inputs := g.files
	if len(inputs) == 0 && g.archive != "" {
		inputs = []string{g.archive}
	}
	if len(inputs) > 0 {
		g.archive = strings.Join(inputs, ", ")
	}
	n := 0
	for _, s := range []string{g.archive, g.lock, g.lockRef} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return nil, cli.Usage(errors.New("give exactly one of --file (archive), --lock (file) or --lock-ref (registry)"))
	}
	in := &releaseInput{close: func() {}, vs: &g.verifiers, advisories: map[string]*mirror.AdvisorySource{}}
	var carried []byte
	var carriedFrom string
	if g.trust.TrustedRootSHA256 != "" && g.archive == "" && g.trust.TrustedRoot == "" {
		return nil, cli.Usage(errors.New("--trusted-root-sha256 checks an archive's trusted_root.json (--file) or --trusted-root; give one"))
	}
	switch {
	case g.archive != "":
		// A path that is not there is the user's mistake (exit 2), not a
		// failure of the archive (exit 1) or of its trust (exit 3).
		for _, f := range inputs {
			if _, err := os.Stat(f); errors.Is(err, fs.ErrNotExist) {
				return nil, cli.Usage(fmt.Errorf("--file %s: no such archive", f))
			}
		}
		a, err := mirror.OpenArchive(ctx, inputs, g.workDir, g.limits.limits())
		if err != nil {
			return nil, err
		}
		in.archive, in.src, in.lockJSON, in.lockBundle = a, a.Layout, a.LockJSON, a.LockBundle
		in.close = func() { _ = a.Close() }
		in.given = "archive " + g.archive
		if len(a.TrustedRootJSON) > 0 {
			carried, carriedFrom = a.TrustedRootJSON, g.archive+":"+"trust/trusted_root.json"
		}
	case g.lock != "":
		var err error
		if in.lockJSON, err = os.ReadFile(g.lock); errors.Is(err, fs.ErrNotExist) {
			return nil, cli.Usage(fmt.Errorf("--lock %s: no such file", g.lock))
		} else if err != nil {
			return nil, fmt.Errorf("reading the lock: %w", err)
		}
		b := g.lockBundle
		if b == "" {
			b = g.lock + ".sigstore.json"
		}
		if in.lockBundle, err = os.ReadFile(b); err != nil {
			return nil, fmt.Errorf("reading the lock's signature bundle: %w", err)
		}
		in.src = &mirror.RegistrySource{Client: c, Name: "source registries", Concurrency: g.concurrency}
		in.given = "lock file " + g.lock + " and the registries it names"
	default:
		var err error
		if in.lockJSON, in.lockBundle, err = mirror.FetchLock(ctx, c, g.lockRef); err != nil {
			return nil, err
		}
		in.src = &mirror.RegistrySource{Client: c, Name: "source registries", Concurrency: g.concurrency}
		in.given = "lock " + g.lockRef
	}
	p, err := g.trust.PolicyCarrying(carried, carriedFrom)
	if err != nil {
		in.close()
		return nil, err
	}
	p.RequireScan = !g.allowUnscanned
	p.RequireProvenance = !g.allowNoProvenance
	p.Expect = g.binding()
	if p.Scan, err = g.scanPolicy(g.now); err != nil {
		in.close()
		return nil, err
	}
	if in.verifier, err = in.vs.make(p); err != nil {
		in.close()
		return nil, err
	}
	in.policy = p
	if err := g.verifyLock(in); err != nil {
		in.close()
		return nil, err
	}
	if in.archive != nil && in.archive.Delta != nil {
		if err := g.deltaSource(c, in); err != nil {
			in.close()
			return nil, err
		}
	}
	return in, nil
}

// deltaSource reads a delta archive together with the target, which must
// hold the release the delta is against: what the archive leaves out is
// read (and verified like the rest) from there.
func (g *command) deltaSource(c *registry.Client, in *releaseInput) error {
	d := in.archive.Delta
	if g.target == "" {
		return cli.Usage(fmt.Errorf("--file %s is a delta against release %s: it holds only what %s lacks; give --target, the registry %s was imported into", g.archive, d.Since.Version, d.Since.Version, d.Since.Version))
	}
	l, m, err := g.lockAndMapping(in)
	if err != nil {
		return err
	}
	in.deltaMapping = m
	in.src = &mirror.FallbackSource{First: in.archive.Layout, Then: &mirror.RegistrySource{Client: c, Map: m.Repository, Name: "target " + m.Target + " (holding " + d.Since.Version + ", the base of this delta of " + l.Version + ")"}}
	return nil
}

// withRelease opens the registry client and the release the flags name (a
// lock in a registry or a file, or an archive), runs fn, and closes both.
func (g *command) withRelease(cmd *cobra.Command, fn func(*registry.Client, *releaseInput) error) error {
	cl, err := g.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	in, err := g.open(cmd.Context(), cl)
	if err != nil {
		return err
	}
	defer in.close()
	if err := g.applyStanding(cmd, cl, in); err != nil {
		return err
	}
	return fn(cl, in)
}

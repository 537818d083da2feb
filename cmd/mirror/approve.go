package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/admission"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
)

// approveFlags say which releases besides the one given the policies admit.
type approveFlags struct {
	files        []string
	keepPrevious int
}

// approveOthers adds to o the images of the other releases -f names and of
// the --keep-previous releases at the target. Each is verified completely,
// as verify verifies the release given (the lock, its scan record under the
// same scan policy, and every signature, attestation and provenance it
// lists, where it is read from), then judged by the same advisory and
// support rules: a policy admits nothing verify would refuse.
func (g *command) approveOthers(ctx context.Context, cl *registry.Client, in *releaseInput, l *release.Lock, af approveFlags, o *admission.Options) error {
	if af.keepPrevious < 0 {
		return cli.Usage(fmt.Errorf("--keep-previous %d: want 0 or more", af.keepPrevious))
	}
	var others []*mirror.Verified
	for _, f := range af.files[min(1, len(af.files)):] {
		rel, err := g.verifyExtraArchive(ctx, in, f)
		if err != nil {
			return fmt.Errorf("-f %s, admitted beside %s: %w", f, l.Version, err)
		}
		others = append(others, rel)
	}
	v, err := in.verifierForExtra("")
	if err != nil {
		return err
	}
	prev, err := mirror.PreviousReleases(ctx, cl, strings.TrimSuffix(g.target, "/")+"/"+release.LockRepository, l.Version, af.keepPrevious, v)
	if err != nil {
		return fmt.Errorf("--keep-previous: %w", err)
	}
	repos, err := g.repos()
	if err != nil {
		return err
	}
	for _, p := range prev {
		m, err := mirror.NewMapping(g.target, p.Lock, repos)
		if err != nil {
			return err
		}
		rel, err := p.Verify(ctx, &mirror.RegistrySource{Client: cl, Map: m.Repository, Name: "target " + m.Target + " (release " + p.Version + ", kept by --keep-previous)"})
		if err != nil {
			return fmt.Errorf("--keep-previous: release %s at %s, admitted beside %s: %w", p.Version, g.target, l.Version, err)
		}
		others = append(others, rel)
	}
	for _, rel := range others {
		if err := g.judgeExtra(ctx, cl, in, l, rel.Lock); err != nil {
			return err
		}
		if sc := rel.LockResult.Scan; sc != nil {
			for _, w := range sc.Warnings {
				fmt.Fprintf(g.stderr, "warning: release %s, admitted beside %s: scan: %s\n", rel.Lock.Version, l.Version, w)
			}
		}
		o.Approve(rel.Lock)
	}
	return nil
}

// verifyExtraArchive opens another release's archive with the same limits
// and verifies it completely from the archive.
func (g *command) verifyExtraArchive(ctx context.Context, in *releaseInput, path string) (*mirror.Verified, error) {
	v, err := in.verifierForExtra("")
	if err != nil {
		return nil, err
	}
	a, err := mirror.OpenArchive(ctx, []string{path}, g.workDir, g.limits.limits())
	if err != nil {
		return nil, err
	}
	defer func() { _ = a.Close() }()
	s, err := mirror.VerifyLock(a.LockJSON, a.LockBundle, v)
	if err != nil {
		return nil, err
	}
	return s.Verify(ctx, a.Layout)
}

// verifierForExtra verifies a release admitted beside the one given: the
// same policy, scan policy included, held to the tag it was fetched by and
// not to --expect-version, which names the release given.
func (in *releaseInput) verifierForExtra(tag string) (*trust.Verifier, error) {
	p := in.policy
	p.Expect = trust.Binding{Tag: tag}
	return in.vs.make(p)
}

// judgeExtra judges a release the policies admit besides the one given as
// verify judges it: by the advisories and support table of the newest signed
// lock known, the target's newest, the given release's or its own. An older
// release's own lock knows nothing of the advisories published after it, so
// judging it by that would admit what verify refuses.
func (g *command) judgeExtra(ctx context.Context, cl *registry.Client, in *releaseInput, given, extra *release.Lock) error {
	src, err := g.advisorySource(ctx, cl, in, extra, g.target != "")
	if err != nil {
		return err
	}
	if g.adv.source == "" && newer(given.Version, src.Release) {
		if src, err = mirror.AdvisoriesFromLock("release "+given.Version+" (the release approved)", given); err != nil {
			return err
		}
	}
	o := g.adv.standingOptions()
	o.Tables = []mirror.NamedTable{{Name: "release " + extra.Version + " (its own lock)", Table: extra.Support},
		{Name: "release " + given.Version + " (the release approved)", Table: given.Support}}
	st := mirror.Judge(src, extra.Version, o)
	if err := st.Err(); err != nil {
		return fmt.Errorf("release %s, admitted beside %s: %w", extra.Version, given.Version, err)
	}
	return nil
}

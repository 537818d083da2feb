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
)

// approveFlags say which releases besides the one given the policies admit.
type approveFlags struct {
	files        []string
	keepPrevious int
}

// approveOthers adds to o the images of the other releases -f names and of
// the --keep-previous releases at the target, each verified with the same
// trust policy and judged by the same advisory rules as the first.
func (g *globals) approveOthers(ctx context.Context, cl *registry.Client, in *releaseInput, l *release.Lock, af approveFlags, o *admission.Options) error {
	var others []*release.Lock
	v, err := in.verifierFor("")
	if err != nil {
		return err
	}
	for _, f := range af.files[min(1, len(af.files)):] {
		a, err := mirror.OpenArchive(ctx, f, g.workDir)
		if err != nil {
			return fmt.Errorf("-f %s: %w", f, err)
		}
		ol, _, err := v.Lock(a.LockJSON, a.LockBundle)
		_ = a.Close()
		if err != nil {
			return fmt.Errorf("-f %s: %w", f, err)
		}
		others = append(others, ol)
	}
	if af.keepPrevious < 0 {
		return cli.Usage(fmt.Errorf("--keep-previous %d: want 0 or more", af.keepPrevious))
	}
	prev, err := mirror.PreviousReleases(ctx, cl, strings.TrimSuffix(g.target, "/")+"/"+release.LockRepository, l.Version, af.keepPrevious, v)
	if err != nil {
		return fmt.Errorf("--keep-previous: %w", err)
	}
	for _, ol := range append(others, prev...) {
		if err := g.judgeExtra(ctx, cl, in, l, ol); err != nil {
			return err
		}
		o.Approve(ol)
	}
	return nil
}

// judgeExtra judges a release the policies admit besides the one given as
// verify judges it: by the advisories and support table of the newest signed
// lock known, the target's newest, the given release's or its own. An older
// release's own lock knows nothing of the advisories published after it, so
// judging it by that would admit what verify refuses.
func (g *globals) judgeExtra(ctx context.Context, cl *registry.Client, in *releaseInput, given, extra *release.Lock) error {
	src, err := g.advisorySource(ctx, cl, in, extra, g.target != "")
	if err != nil {
		return err
	}
	if g.adv.source == "" && newer(given.Version, src.Release) {
		if src, err = mirror.AdvisoriesFromLock("release "+given.Version+" (the release approved)", given); err != nil {
			return err
		}
	}
	o := g.standingOptions()
	o.Tables = []mirror.NamedTable{{Name: "release " + extra.Version + " (its own lock)", Table: extra.Support},
		{Name: "release " + given.Version + " (the release approved)", Table: given.Support}}
	st := mirror.Judge(src, extra.Version, o)
	if err := st.Err(); err != nil {
		return fmt.Errorf("release %s, admitted beside %s: %w", extra.Version, given.Version, err)
	}
	return nil
}

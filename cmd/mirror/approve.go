package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/reloader-dev/reloader/internal/cli"
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
		if _, err := g.judge(ctx, cl, in, ol, false); err != nil {
			return err
		}
		o.Approve(ol)
	}
	return nil
}

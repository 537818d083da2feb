package mirror

import (
	"context"
	"fmt"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release/trust"
)

// PreviousReleases returns the signed locks of the n newest releases the
// target holds that are older than version (lockRepo is the target's
// "…/reloader-release"): the releases an upgrade's rollout window still
// runs. Each lock must verify against v and carry the version its tag
// names, so a re-pointed tag cannot approve another release. Fewer than n
// at the target is an error: the user asked for n.
func PreviousReleases(ctx context.Context, c *registry.Client, lockRepo, version string, n int, v *trust.Verifier) ([]*SignedLock, error) {
	if n <= 0 {
		return nil, nil
	}
	versions, err := ReleasesAt(ctx, c, lockRepo)
	if err != nil {
		return nil, err
	}
	cur := "v" + strings.TrimPrefix(version, "v")
	var out []*SignedLock
	for _, tag := range versions {
		if len(out) == n {
			break
		}
		if semver.Compare(tag, cur) >= 0 {
			continue
		}
		ref := lockRepo + ":" + tag
		lj, lb, err := FetchLock(ctx, c, ref)
		if err != nil {
			return nil, fmt.Errorf("reading previous release %s: %w", ref, err)
		}
		s, err := VerifyLock(lj, lb, v)
		if err != nil {
			return nil, fmt.Errorf("previous release %s: %w", ref, err)
		}
		if "v"+strings.TrimPrefix(s.Version, "v") != tag {
			return nil, fmt.Errorf("%w: previous release %s: its lock is release %s", trust.ErrUntrusted, ref, s.Version)
		}
		out = append(out, s)
	}
	if len(out) < n {
		return nil, fmt.Errorf("%d previous release(s) asked for: %s holds %d older than %s", n, lockRepo, len(out), version)
	}
	return out, nil
}

package mirror

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/mod/semver"

	"github.com/reloader-dev/reloader/mirror/registry"
)

// ReleasesAt lists the versions of the releases a target holds, newest
// first: the semantic-version tags of its lock repository (lockRepo is
// "host/path/reloader-release"). Other tags (cosign's sha256-… signature
// tags, a person's "latest") are not releases and are left out. A tag only
// says a lock was pushed there; whoever reads the lock behind it verifies it.
func ReleasesAt(ctx context.Context, c *registry.Client, lockRepo string) ([]string, error) {
	r, err := c.Repository(ctx, lockRepo, false)
	if err != nil {
		return nil, fmt.Errorf("reading the releases at %s: %w", lockRepo, err)
	}
	tags, err := r.Tags(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the releases at %s: %w", lockRepo, err)
	}
	var out []string
	for _, t := range tags {
		if semver.IsValid(t) && semver.Canonical(t) == t {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return semver.Compare(b, a) })
	return out, nil
}

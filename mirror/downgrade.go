package mirror

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/release/trust"
)

// ErrDowngrade: the target already holds a newer release. Replaying an
// older signed release (with its known vulnerabilities) is the one attack a
// signature cannot stop, and an air-gapped side cannot ask anyone what is
// current; what the target holds is the newest thing it has ever trusted.
// It wraps trust.ErrUntrusted: nothing was pushed.
var ErrDowngrade = fmt.Errorf("%w: older than a release the target holds", trust.ErrUntrusted)

// Downgrade is a release mirrored although the target held a newer one,
// because the user allowed it; the receipt records it.
type Downgrade struct {
	// Version is the release mirrored, NewestAtTarget the newest the
	// target held before.
	Version        string `json:"version"`
	NewestAtTarget string `json:"newestAtTarget"`
}

// LockRepository is the repository of a lock reference
// ("host/repo:v1.2.3" or "host/repo@sha256:..." -> "host/repo"): where the
// releases published beside it are tagged.
func LockRepository(ref string) string {
	r, _, err := splitRef(ref)
	if err != nil {
		return ""
	}
	return r
}

// LockTag is the tag of a lock reference ("host/repo:v1.2.3" -> "v1.2.3"),
// "" for one by digest: what trust.Binding holds the fetched lock to.
func LockTag(ref string) string {
	_, t, err := splitRef(ref)
	if err != nil || strings.HasPrefix(t, "sha256:") {
		return ""
	}
	return t
}

// checkDowngrade refuses version when lockRepo (the target's lock
// repository) holds a newer release, unless allow.
func checkDowngrade(ctx context.Context, c *registry.Client, lockRepo, version string, allow bool) (*Downgrade, error) {
	held, err := ReleasesAt(ctx, c, lockRepo)
	if err != nil {
		return nil, fmt.Errorf("reading what the target holds before pushing (no release is pushed over one it cannot see): %w", err)
	}
	return decideDowngrade(lockRepo, held, version, allow)
}

// decideDowngrade is the verdict on version given the releases held, newest
// first. The same version again is not a downgrade: a re-run changes
// nothing another release relies on. Pre-releases order by semver, so
// v1.3.0-rc.1 is older than v1.3.0.
func decideDowngrade(lockRepo string, held []string, version string, allow bool) (*Downgrade, error) {
	if len(held) == 0 || slices.Contains(held, version) || semver.Compare(version, held[0]) > 0 {
		return nil, nil
	}
	if !semver.IsValid(version) {
		return nil, fmt.Errorf("%w: release %s is not a semantic version and cannot be ordered against %s at %s", ErrDowngrade, version, held[0], lockRepo)
	}
	if !allow {
		return nil, fmt.Errorf("%w: release %s is older than %s, which %s already holds (allow it explicitly with --allow-downgrade)",
			ErrDowngrade, version, held[0], lockRepo)
	}
	return &Downgrade{Version: version, NewestAtTarget: held[0]}, nil
}

package admission

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/reloader-dev/reloader/release"
)

var (
	digestRE = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
	// versionRE keeps a version safe inside a CEL string literal.
	versionRE = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+-]*$`)
)

// Approve adds a verified release's images to those the policies admit: the
// digest of every image index and platform manifest it lists, which is what
// a digest-pinned Pod names (the index, or a platform image if pinned by
// hand). Approving the previous releases too keeps pods of an upgrade's
// rollout window running.
func (o *Options) Approve(l *release.Lock) {
	for _, a := range l.Artifacts {
		if a.Kind == release.KindImageIndex || a.Kind == release.KindImage {
			o.Digests = append(o.Digests, a.Digest)
		}
	}
	o.Approved = append(o.Approved, l.Version)
}

// normaliseDigests sorts and de-duplicates the approved digests and
// refuses a policy that pins nothing, which would deny every image.
func (o *Options) normaliseDigests() error {
	if len(o.Digests) == 0 {
		return fmt.Errorf("no approved image digests: the policy would admit no image (approve a release's lock)")
	}
	for _, d := range o.Digests {
		if !digestRE.MatchString(d) {
			return fmt.Errorf("approved digest %q is not sha256:<64 lowercase hex>", d)
		}
	}
	for _, v := range o.Approved {
		if !versionRE.MatchString(v) {
			return fmt.Errorf("approved release %q is not a version", v)
		}
	}
	slices.Sort(o.Digests)
	o.Digests = slices.Compact(o.Digests)
	slices.SortFunc(o.Approved, compareVersions)
	o.Approved = slices.Compact(o.Approved)
	return nil
}

// compareVersions orders release versions newest first.
func compareVersions(a, b string) int {
	v := func(s string) string { return "v" + strings.TrimPrefix(s, "v") }
	return semver.Compare(v(b), v(a))
}

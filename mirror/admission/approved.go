package admission

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/mod/semver"

	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
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
	tags, bundles := signatureForms(l)
	o.NoTags = o.NoTags || !tags
	o.NoBundles = o.NoBundles || !bundles
}

// signatureForms reports whether every image index of the release is signed
// by a cosign .sig tag, and whether every one by a Sigstore bundle referrer:
// what an engine that reads only one form finds.
func signatureForms(l *release.Lock) (tags, bundles bool) {
	tags, bundles = true, true
	for _, idx := range l.Find(release.KindImageIndex, "") {
		var t, b bool
		for _, s := range l.Artifacts {
			if s.Kind == release.KindSignature && s.Subject == idx.Digest {
				t = t || trust.Format(s) == trust.FormatCosignSignature
				b = b || trust.Format(s) == trust.FormatBundle
			}
		}
		tags, bundles = tags && t, bundles && b
	}
	return tags, bundles
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
	// Copies: Generate takes Options by value, but sorting and compacting
	// in place would reorder and zero the caller's arrays (a second
	// Generate from the same Options then met empty digests).
	o.Digests = slices.Clone(o.Digests)
	slices.Sort(o.Digests)
	o.Digests = slices.Compact(o.Digests)
	o.Approved = slices.Clone(o.Approved)
	slices.SortFunc(o.Approved, compareVersions)
	o.Approved = slices.Compact(o.Approved)
	return nil
}

// compareVersions orders release versions newest first.
func compareVersions(a, b string) int {
	v := func(s string) string { return "v" + strings.TrimPrefix(s, "v") }
	return semver.Compare(v(b), v(a))
}

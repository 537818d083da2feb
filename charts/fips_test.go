package charts

import (
	"strings"
	"testing"
)

// A FIPS user installs either chart with the -fips image pinned (the values
// `reloader-mirror values --variant fips` writes): the chart runs that
// image and sets nothing that takes the container out of FIPS 140-only
// mode: no GODEBUG in the container's environment, which would replace the
// image's GODEBUG=fips140=only, and no --hash-algorithm, whose sha1 that
// mode refuses (unset, the controller picks sha256 there).
func TestChartsRunTheFIPSImageAsItsImageConfiguresIt(t *testing.T) {
	for chart, repo := range map[string]string{Reloader: "harbor.corp/platform/reloader-fips", ReloaderUBI: "harbor.corp/platform/reloader-ubi-fips"} {
		d := deployment(t, render(t, chart, Release{Name: "rel", Namespace: "ops",
			Values: values(map[string]any{"image.repository": repo, "image.tag": "", "image.digest": testDigest})}))
		c := d.Spec.Template.Spec.Containers[0]
		if c.Image != repo+"@"+testDigest {
			t.Errorf("%s: image %q, want %s@%s", chart, c.Image, repo, testDigest)
		}
		for _, e := range c.Env {
			if e.Name == "GODEBUG" {
				t.Errorf("%s sets GODEBUG=%q: it would replace the image's fips140=only", chart, e.Value)
			}
		}
		for _, a := range append(c.Command, c.Args...) {
			if strings.Contains(a, "hash-algorithm") {
				t.Errorf("%s passes %q: the controller chooses sha256 itself in FIPS 140-only mode", chart, a)
			}
		}
	}
}

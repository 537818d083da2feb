package mirror_test

import (
	"strings"
	"testing"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/release"
)

func digestOf(c byte) string { return "sha256:" + strings.Repeat(string(c), 64) }

// pipelineShapedLock lists what the release pipeline publishes: an index per
// variant and the charts of charts/, the library chart among them.
func pipelineShapedLock(charts ...string) *release.Lock {
	l := &release.Lock{Version: "v9.9.9", Artifacts: []release.Artifact{
		{Kind: release.KindImageIndex, Name: "reloader", Variant: "standard", Repository: "ghcr.io/reloader-dev/reloader", Digest: digestOf('a')},
		{Kind: release.KindImageIndex, Name: "reloader-ubi", Variant: "ubi", Repository: "ghcr.io/reloader-dev/reloader-ubi", Digest: digestOf('b')},
		{Kind: release.KindImageIndex, Name: "reloader-fips", Variant: "fips", Repository: "ghcr.io/reloader-dev/reloader-fips", Digest: digestOf('8')},
		{Kind: release.KindImageIndex, Name: "reloader-ubi-fips", Variant: "ubi-fips", Repository: "ghcr.io/reloader-dev/reloader-ubi-fips", Digest: digestOf('9')},
	}}
	for i, c := range charts {
		l.Artifacts = append(l.Artifacts, release.Artifact{Kind: release.KindChart, Name: c, Repository: "ghcr.io/reloader-dev/charts/" + c, Digest: digestOf(byte('c' + i))})
	}
	return l
}

// Each variant installs with its own chart (reloader, reloader-ubi), never
// the library chart, whatever order the lock lists them in; a -fips variant
// with the chart of the variant it is built from, its own image pinned.
func TestValuesPickTheChartOfEachVariant(t *testing.T) {
	l := pipelineShapedLock("reloader-lib", "reloader-ubi", "reloader")
	m, err := mirror.NewMapping("harbor.internal/platform", l, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := mirror.RenderValues(l, m)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"standard": "oci://harbor.internal/platform/charts/reloader@" + digestOf('e'),
		"ubi":      "oci://harbor.internal/platform/charts/reloader-ubi@" + digestOf('d'),
		"fips":     "oci://harbor.internal/platform/charts/reloader@" + digestOf('e'),
		"ubi-fips": "oci://harbor.internal/platform/charts/reloader-ubi@" + digestOf('d'),
	}
	if len(v.Images) != 4 {
		t.Fatalf("values for %d variants, want 4: %+v", len(v.Images), v.Images)
	}
	for _, iv := range v.Images {
		if iv.Chart != want[iv.Variant] {
			t.Errorf("%s variant installs with %s, want %s", iv.Variant, iv.Chart, want[iv.Variant])
		}
		if image := map[string]string{"standard": "reloader", "ubi": "reloader-ubi", "fips": "reloader-fips", "ubi-fips": "reloader-ubi-fips"}[iv.Variant]; !strings.HasSuffix(iv.Repository, "/"+image) {
			t.Errorf("%s variant pins the image %s, want the %s image", iv.Variant, iv.Repository, image)
		}
		if !strings.Contains(v.Install[iv.Variant], want[iv.Variant]) || !strings.Contains(v.Install[iv.Variant], iv.Digest) {
			t.Errorf("%s install command %q does not pin chart and image by digest", iv.Variant, v.Install[iv.Variant])
		}
	}
}

func TestValuesRefuseAVariantWithoutItsChart(t *testing.T) {
	l := pipelineShapedLock("reloader-lib", "reloader")
	m, err := mirror.NewMapping("harbor.internal/platform", l, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = mirror.RenderValues(l, m)
	if err == nil || !strings.Contains(err.Error(), "ubi variant") || !strings.Contains(err.Error(), `"reloader-ubi"`) {
		t.Fatalf("got %v, want an error naming the ubi variant and the chart it needs", err)
	}
}

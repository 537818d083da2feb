package releasetest_test

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/reloader-dev/reloader/publish/page"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
)

// A release ships a -fips image of the standard and of the UBI variant:
// their controller is built against Go's certified FIPS 140-3 module (the
// binary's build information says GOFIPS140=v1.0.0-…) and their
// environment sets GODEBUG=fips140=only, so a container runs FIPS-only by
// default; the standard and UBI images carry neither. The lock lists them
// as the fips and ubi-fips variants, tagged with the version like the
// others, with their SBOMs, and the versions page lists them and says what
// they are.
func TestAReleaseShipsFIPSVariantsOfBothImages(t *testing.T) {
	ctx := context.Background()
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: startRegistry(t), Signer: s})
	if err != nil {
		t.Fatal(err)
	}
	amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
	variants := map[string]string{"reloader": release.VariantStandard, "reloader-ubi": release.VariantUBI,
		"reloader-fips": release.VariantFIPS, "reloader-ubi-fips": release.VariantUBIFIPS}
	for nm, variant := range variants {
		fips := strings.HasSuffix(nm, "-fips")
		idx := rel.Lock.Find(release.KindImageIndex, nm)
		if len(idx) != 1 || idx[0].Variant != variant || idx[0].Tag != rel.Lock.Version {
			t.Fatalf("the lock's %s index: %+v, want one, variant %s, tagged %s", nm, idx, variant, rel.Lock.Version)
		}
		img, err := releasetest.PlatformImage(ctx, idx[0].Repository+"@"+idx[0].Digest, amd64)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(cf.Config.Env, "GODEBUG=fips140=only"); got != fips {
			t.Errorf("%s: GODEBUG=fips140=only in the environment %v: %v, want %v", nm, cf.Config.Env, got, fips)
		}
		bin, err := releasetest.ImageFile(img, "/reloader")
		if err != nil {
			t.Fatal(err)
		}
		bi, err := buildinfo.Read(bytes.NewReader(bin))
		if err != nil {
			t.Fatalf("%s: %v", nm, err)
		}
		var module string
		for _, st := range bi.Settings {
			if st.Key == "GOFIPS140" {
				module = st.Value
			}
		}
		if fips && !strings.HasPrefix(module, "v1.0.0-") || !fips && module != "" {
			t.Errorf("%s: the binary's GOFIPS140 is %q, want v1.0.0-… only in a -fips image", nm, module)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		var sboms int
		for _, a := range rel.Lock.Artifacts {
			if a.Kind == release.KindSBOM && a.Subject == d.String() && a.Variant == variant {
				sboms++
			}
		}
		if sboms != 3 {
			t.Errorf("%s linux/amd64: %d SBOMs in the lock, want SPDX 2.3, SPDX 3.0.1 and CycloneDX", nm, sboms)
		}
	}
	view := page.Build(rel.Lock, page.Options{})
	rows := map[string]bool{}
	for _, r := range view.Rows {
		rows[r.Kind+" "+r.Name+" "+r.Variant+" "+r.Platform] = true
	}
	md, html, err := page.Render(view)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][]byte{md, html} {
		if !bytes.Contains(p, []byte("GODEBUG=fips140=only")) || !bytes.Contains(p, []byte("reloader-ubi-fips")) {
			t.Errorf("the versions page does not say what the -fips images are:\n%s", p)
		}
	}
	for _, want := range []string{"image-index reloader-fips fips ", "image reloader-fips fips linux/amd64",
		"image-index reloader-ubi-fips ubi-fips ", "image reloader-ubi-fips ubi-fips linux/amd64"} {
		if !rows[want] {
			t.Errorf("the versions page has no row %q: %v", want, rows)
		}
	}
}

package page

import (
	"strings"
	"testing"
	"time"

	"github.com/reloader-dev/reloader/release"
)

func TestPageShowsDigestsVerifyCommandsAndSBOMLinks(t *testing.T) {
	d := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	l := &release.Lock{Schema: release.LockSchema, Version: "v1.2.3", Source: "https://github.com/reloader-dev/reloader",
		Commit: strings.Repeat("ab", 20), Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Signer: release.Signer{Identity: "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3", Issuer: "https://token.actions.githubusercontent.com"},
		Artifacts: []release.Artifact{
			{Kind: release.KindImageIndex, Name: "reloader", Repository: "ghcr.io/reloader-dev/reloader", Digest: d("1"), Size: 1, MediaType: "x"},
			{Kind: release.KindImage, Name: "reloader", Platform: "linux/arm/v7", Repository: "ghcr.io/reloader-dev/reloader", Digest: d("2"), Size: 1, MediaType: "x"},
			{Kind: release.KindSBOM, Name: "reloader", Platform: "linux/arm/v7", Repository: "ghcr.io/reloader-dev/reloader", Digest: d("3"), Size: 1, MediaType: "x",
				ArtifactType: "application/spdx+json", Subject: d("2")},
		}}
	md, html, err := Render(Build(l, Options{SBOMBaseURL: "https://dl.example/v1.2.3/", LockRef: "ghcr.io/reloader-dev/reloader-release:v1.2.3"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"cosign verify --new-bundle-format --certificate-identity=https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3 --certificate-oidc-issuer=https://token.actions.githubusercontent.com ghcr.io/reloader-dev/reloader@" + d("2"),
		"[reloader-linux-arm-v7.spdx.json](https://dl.example/v1.2.3/reloader-linux-arm-v7.spdx.json)",
		"reloader-mirror verify --lock-ref ghcr.io/reloader-dev/reloader-release:v1.2.3",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if !strings.Contains(string(html), d("1")) || !strings.Contains(string(html), `href="https://dl.example/v1.2.3/reloader-linux-arm-v7.spdx.json"`) {
		t.Errorf("html lacks the index digest or the SBOM link:\n%s", html)
	}
	if strings.Contains(string(md), d("3")) {
		t.Error("the SBOM artifact is listed as a row; it belongs to its image")
	}
}

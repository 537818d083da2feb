package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/internal/exitcode"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/review"
)

// review through the CLI: the documented exit codes, the files it writes,
// and that nothing is written for a release that does not verify.
func TestCLIReview(t *testing.T) {
	t.Parallel()
	rel, _, key, _ := keySignedRelease(t, context.Background(), startRegistry(t), 5)
	dir := t.TempDir()
	other, _ := releasetest.NewKeySigner(t.TempDir())
	wrongKey := filepath.Join(dir, "other.pub")
	_ = os.WriteFile(wrongKey, other.PublicKeyPEM(), 0o644)
	const licences = "../../review/licence-policy.yaml"
	base := []string{"review", "--lock-ref", rel.LockRef, "--licence-policy", licences, "--allow-unscanned"}

	out := filepath.Join(dir, "ok")
	code, stdout, stderr := runCLI(t, append(base, "--key", key, "--out", out, "--against", rel.LockRef, "-o", "json")...)
	if code != cli.ExitOK {
		t.Fatalf("review: exit %d\n%s", code, stderr)
	}
	var res struct {
		Files    []string       `json:"files"`
		Failures []string       `json:"failures"`
		Review   *review.Review `json:"review"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("json output: %v\n%s", err, stdout)
	}
	for _, f := range res.Files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("review file %s: %v", f, err)
		}
	}
	r := res.Review
	if r.Release.LockDigest == "" || !strings.Contains(r.Release.Verification, "verified offline") || !strings.HasPrefix(r.Release.Signer, "public key sha256:") {
		t.Errorf("release identity %+v", r.Release)
	}
	if want := len(rel.Lock.Find(release.KindImage, "")); len(r.Images) != want || len(r.Components) == 0 {
		t.Errorf("%d images, %d components: want the release's %d platform images", len(r.Images), len(r.Components), want)
	}
	if r.Profile != review.DefaultProfile || len(r.MinimumElements) == 0 || r.MinimumElements[0].Profile != review.DefaultProfile {
		t.Errorf("review.json profile %q (SBOMs %+v), want the default %s", r.Profile, r.MinimumElements, review.DefaultProfile)
	}
	if r.Diff == nil || !r.Diff.Empty() {
		t.Errorf("a release against itself: %+v", r.Diff)
	}

	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		stderr  string
		written bool
	}{
		{"a real release passes --fail-on minimum-elements", []string{"--key", key, "--fail-on", "minimum-elements"}, cli.ExitOK, "", true},
		{"a real release passes --profile cisa-2025", []string{"--key", key, "--fail-on", "minimum-elements", "--profile", "cisa-2025"}, cli.ExitOK, "", true},
		{"a real release passes --profile ntia-2021", []string{"--key", key, "--fail-on", "minimum-elements", "--profile", "ntia-2021"}, cli.ExitOK, "", true},
		{"a real release passes --profile bsi-tr-03183-2 (v2.1.0)", []string{"--key", key, "--fail-on", "minimum-elements", "--profile", "bsi-tr-03183-2"}, cli.ExitOK, "", true},
		{"bsi-tr-03183-2@v1.1 names what v1.1 asks and a real release lacks", []string{"--key", key, "--fail-on", "minimum-elements", "--profile", "bsi-tr-03183-2@v1.1"}, cli.ExitRefused, "lack minimum elements of bsi-tr-03183-2@v1.1", true},
		{"unknown profile", []string{"--key", key, "--profile", "ntia"}, cli.ExitUsage, `--profile "ntia"`, false},
		{"licence findings fail --fail-on licence", []string{"--key", key, "--fail-on", "licence"}, cli.ExitRefused, "licence:", true},
		{"an unscanned release fails --fail-on vulnerability", []string{"--key", key, "--fail-on", "minimum-elements,vulnerability"}, cli.ExitRefused, "vulnerability: the signed lock says the release was made without a vulnerability scan", true},
		{"unknown check", []string{"--key", key, "--fail-on", "cves"}, cli.ExitUsage, `"cves"`, false},
		{"missing gate report file", []string{"--key", key, "--gate-report", filepath.Join(dir, "none.json")}, cli.ExitUsage, "gate report", false},
		{"wrong signer", []string{"--key", wrongKey}, cli.ExitRefused, "signature", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			code, _, stderr := runCLI(t, append(append(base, "--out", out), tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, want %d; stderr %q, want it to contain %q", code, tc.code, stderr, tc.stderr)
			}
			_, err := os.Stat(filepath.Join(out, review.FileHTML))
			if written := err == nil; written != tc.written {
				t.Errorf("review written: %v, want %v: only a verified release gets a review", written, tc.written)
			}
		})
	}
	t.Run("one supplier removed fails cisa-2025 naming the component", func(t *testing.T) { checkOneSupplierRemoved(t, rel) })
	t.Run("one BSI v2.1 element removed fails naming the component", func(t *testing.T) { checkBSIElementsRemoved(t, rel) })
}

// A reviewer needs no source tree: the policy is built in, printed on
// request exactly as the review applies it.
func TestCLIReviewPrintsTheBuiltInLicencePolicy(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runCLI(t, "review", "--print-licence-policy")
	if code != cli.ExitOK {
		t.Fatalf("review --print-licence-policy: exit %d\n%s", code, stderr)
	}
	if stdout != string(review.DefaultLicencePolicyYAML()) {
		t.Errorf("printed policy is not the built-in one:\n%s", stdout)
	}
	if _, err := review.ParseLicencePolicy([]byte(stdout)); err != nil {
		t.Errorf("the printed policy does not parse back: %v", err)
	}
	if _, err := licencePolicy(""); err != nil {
		t.Errorf("no --licence-policy: %v, want the built-in policy", err)
	}
	if _, err := licencePolicy(filepath.Join(t.TempDir(), "none.yaml")); err == nil || !strings.Contains(err.Error(), "reading the licence policy") {
		t.Errorf("a missing --licence-policy file: %v, want a reading error", err)
	}
}

// readReleaseSBOMs reads the SBOM documents the lock of rel lists from its
// registry, as the review reads them.
func readReleaseSBOMs(t *testing.T, rel *releasetest.Release) []review.SBOM {
	t.Helper()
	var out []review.SBOM
	for _, a := range rel.Lock.Artifacts {
		if a.Kind != release.KindSBOM || (a.ArtifactType != review.MediaTypeSPDX && a.ArtifactType != review.MediaTypeCycloneDX) {
			continue
		}
		ref, err := name.NewDigest(a.Repository + "@" + a.Digest)
		if err != nil {
			t.Fatal(err)
		}
		img, err := remote.Image(ref)
		if err != nil {
			t.Fatalf("reading SBOM %s: %v", ref, err)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range layers {
			mt, err := l.MediaType()
			if err != nil || string(mt) != a.ArtifactType {
				continue
			}
			rc, err := l.Compressed()
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, review.SBOM{Artifact: a, Data: data})
		}
	}
	return out
}

// An SBOM of a release made by the pipeline with one supplier removed
// fails --fail-on minimum-elements under cisa-2025, naming the component,
// and that failure exits 3.
func checkOneSupplierRemoved(t *testing.T, rel *releasetest.Release) {
	t.Helper()
	sboms := readReleaseSBOMs(t, rel)
	lp, err := review.DefaultLicencePolicy()
	if err != nil {
		t.Fatal(err)
	}
	in := review.Input{Lock: rel.Lock, SBOMs: sboms, Licences: lp, Profile: review.ProfileCISA2025, Now: rel.Lock.Created}
	r, err := review.Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if f := r.Failures([]string{review.CheckMinimumElements}); len(f) > 0 {
		t.Fatalf("the release as made fails cisa-2025: %q", f)
	}
	removed := ""
	for i, s := range sboms {
		if s.Artifact.ArtifactType != review.MediaTypeSPDX || removed != "" {
			continue
		}
		var doc map[string]any
		if err := json.Unmarshal(s.Data, &doc); err != nil {
			t.Fatal(err)
		}
		for _, p := range doc["packages"].([]any) {
			pkg := p.(map[string]any)
			if sup, _ := pkg["supplier"].(string); removed == "" && strings.HasPrefix(sup, "Organization: ") && pkg["versionInfo"] != nil {
				pkg["supplier"] = "NOASSERTION"
				removed = pkg["name"].(string) + "@" + pkg["versionInfo"].(string)
			}
		}
		if sboms[i].Data, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
	}
	if removed == "" {
		t.Fatal("no SPDX package with a supplier to remove")
	}
	in.SBOMs = sboms
	if r, err = review.Build(in); err != nil {
		t.Fatal(err)
	}
	f := r.Failures([]string{review.CheckMinimumElements})
	if len(f) != 1 || !strings.Contains(f[0], "Software Producer: 1 of") || !strings.Contains(f[0], removed) {
		t.Errorf("failures %q, want the Software Producer of %s", f, removed)
	}
	t.Logf("with the supplier of %s removed: %s", removed, f)
	if code := exitcode.Of(reviewFailed{f}); code != exitcode.Refused {
		t.Errorf("a failed review exits %d, want %d (refused)", code, exitcode.Refused)
	}
}

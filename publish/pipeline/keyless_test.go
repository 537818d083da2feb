package pipeline_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/reloader-dev/reloader/publish/local"
	"github.com/reloader-dev/reloader/publish/page"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
	"github.com/reloader-dev/reloader/release/verify"
	"github.com/reloader-dev/reloader/review"
	"github.com/reloader-dev/reloader/test/registry"

	"github.com/reloader-dev/reloader/test/tools"
)

const (
	workflowIdentity = "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3"
	githubIssuer     = "https://token.actions.githubusercontent.com"
)

// keylessSigner signs as GitHub's Fulcio certifies the release workflow:
// the certificate names the repository, commit and tag of the release.
func keylessSigner(t *testing.T, vs *ca.VirtualSigstore, identity string) releasetest.Signer {
	t.Helper()
	s, err := releasetest.NewKeylessSigner(vs, identity, githubIssuer)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestKeylessReleaseVerifiesAgainstTheWorkflowIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and signs a whole release")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	reg := registry.InProcess(t)
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	signer := keylessSigner(t, vs, workflowIdentity)
	tr, err := signer.TrustedRoot()
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	base, err := local.PushStandInBase(ctx, reg.Host+"/stand-in/ubi-minimal", created)
	if err != nil {
		t.Fatal(err)
	}
	var logb bytes.Buffer
	res, err := pipeline.Run(ctx, pipeline.Options{
		Version: "v1.2.3", Commit: strings.Repeat("cd", 20), Source: "https://github.com/reloader-dev/reloader",
		Created: created, Now: created, ModuleDir: "../..", MainPackage: "./cmd/reloader",
		Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}}, NoScan: true,
		Registry: reg.Host + "/reloader-dev", StandardName: "reloader", UBIName: "reloader-ubi", UBIBase: base,
		Licenses: "Apache-2.0", OutDir: t.TempDir(), Log: &logb, SupportFile: releasetest.SupportTableFile(t, "v1.2.3"),
		// The certificate is only issued when signing starts.
		NewSigner: func(ctx context.Context) (*sign.Signer, error) {
			return signer.NewFor(ctx, "https://github.com/reloader-dev/reloader", strings.Repeat("cd", 20), "v1.2.3")
		},
		BuilderID: workflowIdentity,
		// The test CA logs to no CT log and the test signer timestamps with
		// a TSA instead of a transparency log: opt out of both, explicitly,
		// here only.
		Verify: verify.Options{TrustedRoot: tr, IgnoreSCT: true, IgnoreTlog: true},
		Remote: []remote.Option{remote.WithContext(ctx)},
	})
	t.Logf("release log:\n%s", logb.String())
	if err != nil {
		t.Fatalf("keyless release: %v", err)
	}
	if s := res.Lock.Signer; s.Identity != workflowIdentity || s.Issuer != githubIssuer || s.PublicKey != "" {
		t.Fatalf("lock names signer %+v", s)
	}
	bundles := 0
	for _, a := range res.Lock.Artifacts {
		if a.ArtifactType == release.BundleMediaType {
			bundles++
		}
	}
	// A signature per index, image and SBOM (three formats), an attestation per SBOM on its
	// image and again on its index (admission controllers check the digest
	// a pod names), a provenance per index and image (linux/amd64 only: one
	// image per variant, four variants), and the signed review on each index.
	if want := 4 * (1 + 1 + 3 + 3 + 3 + 2 + 1); bundles != want {
		t.Errorf("lock lists %d Sigstore bundles, want %d", bundles, want)
	}

	// The provenance names the release workflow as its builder.
	for _, f := range []string{"reloader-linux-amd64", "reloader-ubi-index"} {
		pred, err := os.ReadFile(filepath.Join(filepath.Dir(res.LockPath), "provenance", f+".slsa.json"))
		if err != nil || !strings.Contains(string(pred), `"id":"`+workflowIdentity+`"`) {
			t.Errorf("%s provenance does not name the workflow as builder (%v)", f, err)
		}
	}
	reviews := 0
	for _, a := range res.Lock.Artifacts {
		if a.Kind == release.KindAttestation && a.PredicateType == review.PredicateType {
			reviews++
			if ix := res.Lock.Find(release.KindImageIndex, a.Name); len(ix) != 1 || ix[0].Digest != a.Subject {
				t.Errorf("the signed review %s is not on an image index", a.Digest)
			}
		}
	}
	if reviews != 4 {
		t.Errorf("the lock lists %d signed reviews, want one on each of the 4 indexes", reviews)
	}
	checkPublishedPage(t, filepath.Dir(res.LockPath))
	// The release notes publish the trusted root the release was verified
	// against, and its sha256 for --trusted-root-sha256.
	pageDir := filepath.Join(filepath.Dir(res.LockPath), "page")
	published, err := os.ReadFile(filepath.Join(pageDir, page.TrustedRootFile))
	if err != nil {
		t.Fatalf("the keyless release publishes no trusted root: %v", err)
	}
	notes, err := os.ReadFile(filepath.Join(pageDir, "versions.md"))
	if err != nil || !strings.Contains(string(notes), fmt.Sprintf("%x", sha256.Sum256(published))) {
		t.Errorf("the release notes lack the sha256 of the published trusted root (%v)", err)
	}

	lockBytes, err := os.ReadFile(res.LockPath)
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := os.ReadFile(res.BundlePath)
	if err != nil {
		t.Fatal(err)
	}
	check := func(expect release.Signer, lockBytes []byte) error {
		opts := verify.Options{Expect: expect, TrustedRoot: tr, IgnoreSCT: true, IgnoreTlog: true}
		l, err := verify.Lock(ctx, lockBytes, bundle, opts)
		if err != nil {
			return err
		}
		_, err = verify.Artifacts(ctx, l, opts)
		return err
	}
	t.Run("verifies offline against the workflow identity", func(t *testing.T) {
		if err := check(release.Signer{Identity: workflowIdentity, Issuer: githubIssuer}, lockBytes); err != nil {
			t.Fatal(err)
		}
		if err := check(release.Signer{IdentityRegexp: `^https://github\.com/reloader-dev/reloader/\.github/workflows/release\.yml@refs/tags/v.+`, Issuer: githubIssuer}, lockBytes); err != nil {
			t.Fatalf("identity regexp: %v", err)
		}
	})
	t.Run("without a transparency-log entry it is refused unless waived", func(t *testing.T) {
		opts := verify.Options{Expect: release.Signer{Identity: workflowIdentity, Issuer: githubIssuer}, TrustedRoot: tr, IgnoreSCT: true}
		if _, err := verify.Lock(ctx, lockBytes, bundle, opts); !errors.Is(err, trust.ErrUntrusted) {
			t.Fatalf("a bundle with no tlog entry, tlog required: %v", err)
		}
	})
	t.Run("another workflow's identity is refused", func(t *testing.T) {
		other := strings.Replace(workflowIdentity, "release.yml", "ci.yml", 1)
		if err := check(release.Signer{Identity: other, Issuer: githubIssuer}, lockBytes); err == nil {
			t.Fatal("verified against the wrong identity")
		} else {
			t.Logf("message: %v", err)
		}
	})
	t.Run("a modified lock is refused", func(t *testing.T) {
		forged := bytes.Replace(lockBytes, []byte(`"version": "v1.2.3"`), []byte(`"version": "v1.2.4"`), 1)
		if err := check(release.Signer{Identity: workflowIdentity, Issuer: githubIssuer}, forged); err == nil {
			t.Fatal("a modified lock verified")
		} else {
			t.Logf("message: %v", err)
		}
	})
}

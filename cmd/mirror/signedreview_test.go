package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/reloader-dev/reloader/cmd/internal/cli"
	"github.com/reloader-dev/reloader/publish/local"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/verify"
	"github.com/reloader-dev/reloader/review"

	"github.com/reloader-dev/reloader/test/tools"
)

// reviewOutput is review -o json.
type reviewOutput struct {
	SignedReview *struct {
		Indexes    []string `json:"indexes"`
		HTMLDigest string   `json:"htmlDigest"`
	} `json:"signedReview"`
	Review *review.Review `json:"review"`
}

func runReview(t *testing.T, args ...string) (int, reviewOutput, string) {
	t.Helper()
	code, stdout, stderr := runCLI(t, append([]string{"review", "-o", "json"}, args...)...)
	var out reviewOutput
	if code == cli.ExitOK {
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("review json: %v\n%s", err, stdout)
		}
	}
	return code, out, stderr
}

// The review a release made by the real pipeline (two platforms of the
// standard and UBI variants, their -fips images on amd64, key-signed) signs
// on each image index verifies on the
// disconnected side, from an archive and from a registry, and is equal to
// the review recomputed there; the page the release published is the one
// whose digest is signed. A one-byte change to the signed review refuses
// the release whether it is re-signed with the release key (the review is
// then not the release's), signed with another key, or not signed at all.
// Each component is listed once with the images and platforms carrying it,
// and the review names the archive given, never where it was unpacked.
func TestTheSignedReviewOfARealReleaseVerifiesAndATamperedOneDoesNot(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and signs a two-platform release of the controller")
	}
	// The arm64 cross-build is the long part with a cold build cache.
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	src := startRegistry(t)
	out := t.TempDir()
	// Two platforms of two variants, and their -fips images on amd64 only
	// (on arm64 they would be another full compile of the controller):
	// every Go module is in six images.
	platforms, err := pipeline.ParsePlatforms([]string{"linux/amd64", "linux/arm64"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := local.Run(ctx, local.Options{ModuleDir: "../..", MainPackage: "./cmd/reloader", OutDir: out, Registry: src.Host,
		Version: "v1.2.3", Commit: strings.Repeat("ef", 20), Created: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		NoScan: true, Platforms: platforms, FIPSPlatforms: platforms[:1], SupportFile: releasetest.SupportTableFile(t, "v1.2.3")})
	if err != nil {
		t.Fatalf("local release: %v", err)
	}
	t.Logf("two-platform release in %s", time.Since(start).Round(time.Second))
	signer, err := sign.FromKey(sign.KeyOptions{PrivateKeyPath: filepath.Join(out, "keys", "cosign.key")})
	if err != nil {
		t.Fatal(err)
	}
	trustArgs := []string{"--key", res.PublicKey, "--allow-unscanned"}
	published, err := os.ReadFile(filepath.Join(out, "page", "review", review.FileHTML))
	if err != nil {
		t.Fatal(err)
	}
	publishedDigest := fmt.Sprintf("sha256:%x", sha256.Sum256(published))
	pred, err := os.ReadFile(filepath.Join(out, pipeline.ReviewPredicateFile))
	if err != nil {
		t.Fatal(err)
	}

	archive := filepath.Join(t.TempDir(), "reloader-v1.2.3.tar")
	if code, _, errs := runCLI(t, append([]string{"export", "--lock", res.LockPath, "--to", archive}, trustArgs...)...); code != cli.ExitOK {
		t.Fatalf("export: exit %d: %s", code, errs)
	}

	t.Run("from the archive it verifies, names the archive and lists each component once", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "review")
		code, got, errs := runReview(t, append([]string{"-f", archive, "--verify", "--out", dir}, trustArgs...)...)
		if code != cli.ExitOK {
			t.Fatalf("review --verify of the archive: exit %d: %s", code, errs)
		}
		if got.SignedReview == nil || len(got.SignedReview.Indexes) != 4 || got.SignedReview.HTMLDigest != publishedDigest {
			t.Errorf("signed review %+v, want every index and the published page's digest %s", got.SignedReview, publishedDigest)
		}
		r := got.Review
		if !strings.Contains(r.Release.Verification, "archive "+archive) {
			t.Errorf("verification line %q does not name the archive %s", r.Release.Verification, archive)
		}
		for _, f := range []string{review.FileHTML, review.FileJSON, review.FileMD} {
			data, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(data, []byte("reloader-mirror-import-")) || bytes.Contains(data, []byte(os.TempDir()+"/reloader-mirror")) {
				t.Errorf("%s names the temporary unpacking directory", f)
			}
			if !bytes.Contains(data, []byte(archive)) {
				t.Errorf("%s does not name the archive %s", f, archive)
			}
		}
		rows := 0
		seen := map[string]bool{}
		for _, c := range r.Components {
			rows += len(c.In)
			k := c.Name + "@" + c.Version + " " + c.PURL + " " + c.Source
			if seen[k] {
				t.Errorf("%s is listed twice", k)
			}
			seen[k] = true
		}
		var carriers []string
		for _, c := range r.Components {
			if c.Name == "k8s.io/client-go" {
				carriers = c.Labels()
			}
		}
		want := []string{"reloader linux/amd64", "reloader linux/arm64", "reloader-fips linux/amd64",
			"reloader-ubi linux/amd64", "reloader-ubi linux/arm64", "reloader-ubi-fips linux/amd64"}
		if strings.Join(carriers, ",") != strings.Join(want, ",") {
			t.Errorf("k8s.io/client-go is carried by %q, want %q", carriers, want)
		}
		t.Logf("%d components listed once each, for %d image-and-component pairs", len(r.Components), rows)
		if len(r.Components)*2 > rows {
			t.Errorf("%d components for %d pairs: the modules shared by six images are not folded", len(r.Components), rows)
		}
		signed, err := review.ParseAttestation(pred)
		if err != nil {
			t.Fatal(err)
		}
		if r.Release.Signer != signed.Review.Release.Signer {
			t.Errorf("the reviewer names the signer %q, the signed review %q", r.Release.Signer, signed.Review.Release.Signer)
		}
		var ids []string
		for _, p := range r.SSDF.Practices {
			ids = append(ids, p.ID)
		}
		if got := strings.Join(ids, " "); got != "PO.3 PS.1 PS.2 PS.3 PW.4 PW.6" {
			t.Errorf("an unscanned release without charts maps SSDF practices %s", got)
		}
	})

	t.Run("from the registry it verifies and names the lock", func(t *testing.T) {
		code, got, errs := runReview(t, append([]string{"--lock-ref", res.LockRef, "--verify", "--out", t.TempDir()}, trustArgs...)...)
		if code != cli.ExitOK {
			t.Fatalf("review --verify from the registry: exit %d: %s", code, errs)
		}
		if got.SignedReview == nil || got.SignedReview.HTMLDigest != publishedDigest || !strings.Contains(got.Review.Release.Verification, "lock "+res.LockRef) {
			t.Errorf("signed review %+v, verification %q", got.SignedReview, got.Review.Release.Verification)
		}
	})

	// One byte: a component's version as the review states it.
	i := bytes.Index(pred, []byte(`"name":"github.com/spf13/cobra","version":"v1.`))
	if i < 0 {
		t.Fatalf("the signed review lists no cobra:\n%.400s", pred)
	}
	i += len(`"name":"github.com/spf13/cobra","version":"v1.`)
	forged := bytes.Clone(pred)
	forged[i] = '0' + (forged[i]-'0'+1)%10
	index := res.Lock.Find(release.KindImageIndex, "reloader")[0]
	// reattest replaces the review in the index's cosign attestations with
	// forged, signed by s, and returns a lock listing the new attestation
	// manifest, signed with the release key.
	reattest := func(t *testing.T, s *sign.Signer) string {
		t.Helper()
		ref, err := name.NewDigest(index.Repository + "@" + index.Digest)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Attest(ctx, sign.Registry{Remote: []remote.Option{remote.WithContext(ctx)}}, ref, review.PredicateType, forged); err != nil {
			t.Fatal(err)
		}
		att := attestationsOf(t, res.Lock, index.Digest)
		desc, err := remote.Head(ref.Context().Tag(att.Tag), remote.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		return resignedLock(t, ctx, signer.Blob, res.Lock, func(l *release.Lock) {
			for i, a := range l.Artifacts {
				if a.Digest == att.Digest {
					l.Artifacts[i].Digest, l.Artifacts[i].Size = desc.Digest.String(), desc.Size
				}
			}
		})
	}
	refused := func(t *testing.T, lock string, extra []string, want ...string) {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "review")
		code, _, errs := runReview(t, append(append([]string{"--lock", lock, "--verify", "--out", dir}, trustArgs...), extra...)...)
		if code != cli.ExitRefused {
			t.Fatalf("exit %d, want %d (refused): %s", code, cli.ExitRefused, errs)
		}
		for _, w := range want {
			if !strings.Contains(errs, w) {
				t.Errorf("stderr %q does not name %q", errs, w)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, review.FileHTML)); err == nil {
			t.Error("a review was written for a release whose signed review does not hold")
		}
		t.Logf("refused: %s", strings.TrimSpace(errs))
	}

	t.Run("a one-byte change re-signed with the release key is not the release's review", func(t *testing.T) {
		refused(t, reattest(t, signer), nil, "image index reloader ("+index.Digest+")", "review.components[", ".version: signed")
	})
	t.Run("a one-byte change signed with another key does not verify", func(t *testing.T) {
		// The attestation manifest no longer verifies as a whole, so
		// neither does the provenance it carries beside the review.
		refused(t, reattest(t, otherSigner(t)), nil, "untrusted: image-index reloader "+index.Digest)
	})
	t.Run("an index without a signed review is refused", func(t *testing.T) {
		att := attestationsOf(t, res.Lock, index.Digest)
		lock := resignedLock(t, ctx, signer.Blob, res.Lock, func(l *release.Lock) {
			kept := l.Artifacts[:0]
			for _, a := range l.Artifacts {
				if a.Digest != att.Digest {
					kept = append(kept, a)
				}
			}
			l.Artifacts = kept
		})
		// Its provenance went with it; that is allowed here, to reach the
		// review's own refusal.
		refused(t, lock, []string{"--allow-no-provenance"}, "image index reloader ("+index.Digest+") carries no signed review")
	})
}

// The keyless path: a release signed by the (virtual) Sigstore workflow
// identity carries its review as a Sigstore bundle on each index, listed
// in the lock with its predicate type, and review --verify checks it
// against the certificate identity.
func TestTheSignedReviewOfAKeylessReleaseVerifiesAgainstTheWorkflowIdentity(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and signs a release of the controller")
	}
	ctx, cancel := tools.BuildContext(t)
	defer cancel()
	src := startRegistry(t)
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	signer, err := releasetest.NewKeylessSigner(vs, workflowIdentity, githubIssuer)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := signer.TrustedRoot()
	if err != nil {
		t.Fatal(err)
	}
	trJSON, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(root, trJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	base, err := local.PushStandInBase(ctx, src.Host+"/stand-in/ubi-minimal", created)
	if err != nil {
		t.Fatal(err)
	}
	res, err := pipeline.Run(ctx, pipeline.Options{
		Version: "v1.2.3", Commit: strings.Repeat("cd", 20), Source: "https://github.com/reloader-dev/reloader",
		Created: created, Now: created, ModuleDir: "../..", MainPackage: "./cmd/reloader",
		Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}}, NoScan: true,
		Registry: src.Host + "/reloader-dev", StandardName: "reloader", UBIName: "reloader-ubi", UBIBase: base,
		Licenses: "Apache-2.0", OutDir: t.TempDir(), SupportFile: releasetest.SupportTableFile(t, "v1.2.3"),
		NewSigner: func(ctx context.Context) (*sign.Signer, error) {
			return signer.NewFor(ctx, "https://github.com/reloader-dev/reloader", strings.Repeat("cd", 20), "v1.2.3")
		},
		BuilderID: workflowIdentity,
		Verify:    verify.Options{TrustedRoot: tr, IgnoreSCT: true, IgnoreTlog: true},
		Remote:    []remote.Option{remote.WithContext(ctx)},
	})
	if err != nil {
		t.Fatalf("keyless release: %v", err)
	}
	listed := 0
	for _, a := range res.Lock.Artifacts {
		if a.PredicateType == review.PredicateType && a.Kind == release.KindAttestation {
			listed++
			if ix := res.Lock.Find(release.KindImageIndex, a.Name); len(ix) != 1 || ix[0].Digest != a.Subject {
				t.Errorf("a signed review on %s, which is not an image index", a.Subject)
			}
		}
	}
	if listed != 4 {
		t.Errorf("the lock lists %d signed reviews, want one per image index (4)", listed)
	}
	code, got, errs := runReview(t, "--lock-ref", res.LockRef, "--verify", "--out", t.TempDir(), "--allow-unscanned",
		"--trusted-root", root, "--certificate-identity", workflowIdentity, "--certificate-oidc-issuer", githubIssuer,
		"--insecure-ignore-sct", "--insecure-ignore-tlog")
	if code != cli.ExitOK {
		t.Fatalf("review --verify of a keyless release: exit %d: %s", code, errs)
	}
	if got.SignedReview == nil || len(got.SignedReview.Indexes) != 4 {
		t.Errorf("signed review %+v, want every index verified", got.SignedReview)
	}
	code, _, errs = runReview(t, "--lock-ref", res.LockRef, "--verify", "--out", t.TempDir(), "--allow-unscanned",
		"--trusted-root", root, "--certificate-identity", strings.Replace(workflowIdentity, "release.yml", "ci.yml", 1), "--certificate-oidc-issuer", githubIssuer,
		"--insecure-ignore-sct", "--insecure-ignore-tlog")
	if code != cli.ExitRefused {
		t.Errorf("another workflow's identity: exit %d, want %d: %s", code, cli.ExitRefused, errs)
	}
}

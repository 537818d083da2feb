package admission_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/mirror/admission"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
	"github.com/reloader-dev/reloader/test/tools"
)

// engineCase is one image an admission engine is asked about, and whether
// the generated policy must admit it.
type engineCase struct {
	name, image string
	admit       bool
	// why matches the engine's answer for a denial, so that an image
	// denied for another reason (a policy the engine cannot use, an
	// unreachable registry) does not pass as denied.
	why string
}

const (
	notSigned  = `validation failed for authority release-(signature|sbom)`
	noSBOM     = `authority release-sbom|type https://spdx\.dev/Document`
	notCovered = `uncovered by policy`
)

// engineFixture is a real release, published by the release pipeline,
// verified and mirrored into a loopback registry as reloader-mirror copy
// does, the policy-controller policies `reloader-mirror policy` prints for
// it at the mirror, and the images an engine must admit and deny there.
type engineFixture struct {
	policy []byte
	cases  []engineCase
}

const (
	workflowIdentity = "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3"
	githubIssuer     = "https://token.actions.githubusercontent.com"
)

// keyedFixture is a key-signed release, with an image at the mirror signed
// and SBOM-attested by another key.
func keyedFixture(t *testing.T, ctx context.Context) *engineFixture {
	t.Helper()
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := trust.LoadPolicy(trust.PolicyFiles{KeyFile: writeFile(t, "cosign.pub", s.PublicKeyPEM())})
	if err != nil {
		t.Fatal(err)
	}
	return mirrorForEngine(t, ctx, s, other, "signed and attested by another key", p, admission.Trust{PublicKeyPEM: string(s.PublicKeyPEM())})
}

// keylessFixture is a keyless release whose signatures have entries in the
// VirtualSigstore's transparency log, with an image at the mirror signed
// and attested by a certificate the same CA issued to another identity.
func keylessFixture(t *testing.T, ctx context.Context) *engineFixture {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	s, err := releasetest.NewKeylessSigner(vs, workflowIdentity, githubIssuer)
	if err != nil {
		t.Fatal(err)
	}
	s.Tlog = true
	other := s.WithIdentity("https://github.com/someone/fork/.github/workflows/release.yml@refs/tags/v1.2.3")
	tr, err := s.TrustedRoot()
	if err != nil {
		t.Fatal(err)
	}
	rootJSON, err := s.TrustedRootJSON()
	if err != nil {
		t.Fatal(err)
	}
	// The test CA logs to no CT log, so neither reloader-mirror nor the
	// policy may require SCTs (--insecure-ignore-sct); the log entry is
	// required.
	p := trust.Policy{Identity: workflowIdentity, Issuer: githubIssuer, TrustedRoot: tr, IgnoreSCT: true}
	return mirrorForEngine(t, ctx, s, other, "signed and attested by another identity of the trusted CA", p,
		admission.Trust{Identity: workflowIdentity, Issuer: githubIssuer, TrustedRootJSON: rootJSON, IgnoreSCT: true})
}

func mirrorForEngine(t *testing.T, ctx context.Context, s, other releasetest.Signer, otherCase string, p trust.Policy, tt admission.Trust) *engineFixture {
	t.Helper()
	m := publishAndMirror(t, ctx, s, p, startRegistry(t), 61)
	src, rel, tgt, o := m.src, m.rel, m.target, m.opts
	repo := tgt + "/reloader"
	var platform string
	for _, a := range rel.Lock.Artifacts {
		if a.Kind == release.KindImage && a.Name == "reloader" {
			platform = a.Digest
		}
	}
	if platform == "" {
		t.Fatal("the release lists no platform image")
	}
	signer := func(s releasetest.Signer) *sign.Signer {
		ss, err := s.New(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ss
	}
	// Anyone with push access to the mirror can put images there by digest.
	unsigned := pushImage(t, ctx, repo, 1)
	byOther := pushImage(t, ctx, repo, 2)
	signAs(t, ctx, signer(other), byOther, true)
	noSBOMImage := pushImage(t, ctx, repo, 3)
	signAs(t, ctx, signer(s), noSBOMImage, false)
	// The release's own index, by digest, at the registry it came from.
	elsewhere := strings.Replace(repo, tgt, src.Host+"/reloader-dev", 1) + "@" + rel.Indexes["reloader"]
	// An older release, signed and attested by the release signer, left at
	// the mirror: only the pin denies it.
	older := mirrorOlder(t, ctx, m, p, "v1.1.0", 62)
	notApproved := pushImage(t, ctx, repo, 4)
	signAs(t, ctx, signer(s), notApproved, true)

	o.Trust = tt
	o.Name, o.Namespace = "rm", "reloader"
	// The policies pin the approved digests, so an image of any other
	// digest matches none of them. Approving the three rogue images (as if
	// a release had listed them) keeps the signature and SBOM authorities
	// under test: the pin alone would deny them before any signature check.
	o.Digests = append(o.Digests, unsigned.DigestStr(), byOther.DigestStr(), noSBOMImage.DigestStr())
	out, err := admission.Generate(o, []admission.Format{admission.PolicyController})
	if err != nil {
		t.Fatal(err)
	}

	return &engineFixture{policy: out[admission.PolicyController], cases: []engineCase{
		{"the release index by digest at the mirror", repo + "@" + rel.Indexes["reloader"], true, ""},
		{"the ubi variant's index by digest at the mirror", tgt + "/reloader-ubi@" + rel.Indexes["reloader-ubi"], true, ""},
		{"the release platform image by digest at the mirror", repo + "@" + platform, true, ""},
		{"an unsigned image pushed by digest into the mirrored repository", unsigned.String(), false, notSigned},
		{"an image pushed by digest into the mirrored repository, " + otherCase, byOther.String(), false, notSigned},
		{"an image signed by the release signer without the SPDX SBOM attestation", noSBOMImage.String(), false, noSBOM},
		{"the release image by tag at the mirror", repo + ":" + rel.Lock.Version, false, notCovered},
		{"the release image from another registry", elsewhere, false, notCovered},
		{"an older release signed by the release signer, at the mirror by digest", older, false, notCovered},
		{"an image signed and attested by the release signer whose digest no release approved", notApproved.String(), false, notCovered},
	}}
}

// pushImage writes a random image into repo by digest.
func pushImage(t *testing.T, ctx context.Context, repo string, layers int64) name.Digest {
	t.Helper()
	img, err := random.Image(512, layers)
	if err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewDigest(repo + "@" + d.String())
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithContext(ctx)); err != nil {
		t.Fatal(err)
	}
	return ref
}

// signAs signs ref as the release pipeline signs an image (cosign tags with
// a key, Sigstore bundle referrers keyless), with an SPDX SBOM attestation
// when sbom is set.
func signAs(t *testing.T, ctx context.Context, s *sign.Signer, ref name.Digest, sbom bool) {
	t.Helper()
	reg := sign.Registry{Remote: []remote.Option{remote.WithContext(ctx)}}
	spdx := []byte(`{"spdxVersion":"SPDX-2.3","SPDXID":"SPDXRef-DOCUMENT","name":"rogue","dataLicense":"CC0-1.0"}`)
	if !s.Keyless() {
		if err := s.Manifest(ctx, reg, ref, nil); err != nil {
			t.Fatal(err)
		}
		if sbom {
			if err := s.Attest(ctx, reg, ref, sign.PredicateSPDX, spdx); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	desc, err := remote.Head(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	subject := v1.Descriptor{MediaType: desc.MediaType, Size: desc.Size, Digest: desc.Digest}
	if _, _, err := s.BundleReferrer(ctx, reg, ref, subject, sign.PredicateCosignSign, nil); err != nil {
		t.Fatal(err)
	}
	if sbom {
		if _, _, err := s.BundleReferrer(ctx, reg, ref, subject, sign.PredicateSPDX, spdx); err != nil {
			t.Fatal(err)
		}
	}
}

// airGapped is the environment of every engine process: a fresh HOME and
// TUF cache, and any connection other than to loopback sent to a proxy that
// refuses it, so a policy that needs the public Sigstore (its TUF root, its
// Rekor, its Fulcio) fails here as it would behind the air gap.
func airGapped(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "TUF_ROOT="+filepath.Join(home, "tuf"), "SIGSTORE_NO_CACHE=true", "DOCKER_CONFIG="+home)
	return append(env, refusingProxy...)
}

// policyTester evaluates the generated policy-controller policies for one
// image with policy-controller's own evaluation entry point, policy-tester:
// the ClusterImagePolicies go in as --policy, the TrustRoot they refer to
// (keyless) as --trustroot, exactly as reloader-mirror policy printed them.
// It returns nil when the image is admitted and the tester's answer when
// not; a policy the engine cannot even load fails the test.
type policyTester struct {
	bin, policy, trustRoot string
	env                    []string
}

func newPolicyTester(t *testing.T, ctx context.Context, policy []byte) *policyTester {
	t.Helper()
	bin, err := tools.Binary(ctx, tools.PolicyController, "policy-tester")
	if err != nil {
		t.Fatal(err)
	}
	pt := &policyTester{bin: bin, env: airGapped(t)}
	var cips []string
	for _, obj := range decode(t, policy) {
		b, err := yaml.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		switch obj.GetKind() {
		case "TrustRoot":
			if pt.trustRoot != "" {
				t.Fatal("the policy has two TrustRoots; policy-tester takes one")
			}
			pt.trustRoot = writeFile(t, "trustroot.yaml", b)
		case "ClusterImagePolicy":
			cips = append(cips, string(b))
		default:
			t.Fatalf("the policy-controller policy holds a %s, which policy-controller does not read", obj.GetKind())
		}
	}
	if len(cips) == 0 {
		t.Fatalf("no ClusterImagePolicy in\n%s", policy)
	}
	pt.policy = writeFile(t, "policies.yaml", []byte(strings.Join(cips, "---\n")))
	return pt
}

var errDenied = errors.New("denied")

func (pt *policyTester) admit(ctx context.Context, image string) (string, error) {
	args := []string{"--policy", pt.policy, "--image", image, "--log-level", "warn"}
	if pt.trustRoot != "" {
		args = append(args, "--trustroot", pt.trustRoot)
	}
	cmd := exec.CommandContext(ctx, pt.bin, args...)
	cmd.Env = pt.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	out := strings.TrimSpace(stdout.String() + "\n" + stderr.String())
	if err == nil {
		return out, nil
	}
	// A denial is the tester's JSON verdict on stdout; anything else (a
	// policy it refuses to load, a crash) is not a verdict.
	var verdict struct{ Errors []string }
	if json.Unmarshal(stdout.Bytes(), &verdict) != nil || len(verdict.Errors) == 0 {
		return out, fmt.Errorf("policy-tester gave no verdict: %v\n%s", err, out)
	}
	return strings.Join(verdict.Errors, "; "), errDenied
}

// The ClusterImagePolicies reloader-mirror policy prints, key-signed and
// keyless (with log entries, or with TSA timestamps only under a
// timestamp-only trusted root), evaluated by policy-controller's own engine (policy-tester, the
// pinned v0.13.1) against a real mirrored release, fully offline: the
// release's images by digest at the mirror are admitted; an image pushed
// there by digest unsigned or signed by another key or identity, an image
// signed without the SPDX SBOM attestation (each of them approved, so the
// signature check is what denies it), the release image by tag, the release
// image at another registry, an older release signed by the same signer at
// the mirror and a signed image of no approved digest are each denied.
func TestPolicyControllerEvaluatesTheGeneratedPolicies(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("publishes releases and runs policy-controller")
	}
	for _, tc := range []struct {
		name    string
		fixture func(*testing.T, context.Context) *engineFixture
	}{
		{"key", keyedFixture},
		{"keyless with log entries", keylessFixture},
		{"keyless timestamped by the TSA under a timestamp-only root", timestampedFixture},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			f := tc.fixture(t, ctx)
			pt := newPolicyTester(t, ctx, f.policy)
			for _, c := range f.cases {
				t.Run(c.name, func(t *testing.T) {
					out, err := pt.admit(ctx, c.image)
					switch {
					case err != nil && !errors.Is(err, errDenied):
						t.Fatal(err)
					case c.admit && err != nil:
						t.Errorf("%s denied: %s\npolicy:\n%s", c.image, out, f.policy)
					case !c.admit && err == nil:
						t.Errorf("%s admitted: %s\npolicy:\n%s", c.image, out, f.policy)
					case !c.admit && !regexp.MustCompile(c.why).MatchString(out):
						t.Errorf("%s denied, but not for the reason wanted (%s): %s", c.image, c.why, out)
					default:
						t.Logf("%s: %s", c.image, out)
					}
				})
			}
		})
	}
}

package admission_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/admission"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release/trust"
	testregistry "github.com/reloader-dev/reloader/test/registry"
	"github.com/reloader-dev/reloader/test/virtualsigstore"
)

// timestampedFixture is a keyless release signed without a transparency
// log, its signatures timestamped only by the VirtualSigstore's TSA, under a
// trusted root that lists the TSA and no log: reloader-mirror verifies it
// with no waiver, and the policy takes the TSA as the time source.
func timestampedFixture(t *testing.T, ctx context.Context) *engineFixture {
	t.Helper()
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	s, err := releasetest.NewKeylessSigner(vs, workflowIdentity, githubIssuer)
	if err != nil {
		t.Fatal(err)
	}
	other := s.WithIdentity("https://github.com/someone/fork/.github/workflows/release.yml@refs/tags/v1.2.3")
	rootJSON, err := s.TrustedRootJSONOf(virtualsigstore.Parts{NoLogs: true})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := root.NewTrustedRootFromJSON(rootJSON)
	if err != nil {
		t.Fatal(err)
	}
	p := trust.Policy{Identity: workflowIdentity, Issuer: githubIssuer, TrustedRoot: tr, IgnoreSCT: true}
	return mirrorForEngine(t, ctx, s, other, "signed and attested by another identity of the trusted CA", p,
		admission.Trust{Identity: workflowIdentity, Issuer: githubIssuer, TrustedRootJSON: rootJSON, IgnoreSCT: true})
}

// mirrorBundleOnlyKeyRelease publishes a key-signed release whose
// signatures and attestations are Sigstore bundle referrers only (publish
// --signature-format bundle), verifies it and mirrors it into dst, as
// reloader-mirror copy does.
func mirrorBundleOnlyKeyRelease(t *testing.T, ctx context.Context, dst *testregistry.Registry) *mirroredRelease {
	t.Helper()
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := trust.LoadPolicy(trust.PolicyFiles{KeyFile: writeFile(t, "cosign.pub", s.PublicKeyPEM())})
	if err != nil {
		t.Fatal(err)
	}
	src := startRegistry(t)
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: 71, SignatureFormat: sign.FormatBundle})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range rel.Lock.Artifacts {
		if f := trust.Format(a); f != "" && f != trust.FormatBundle {
			t.Fatalf("the bundle-only release lists a %s %s", f, a.Digest)
		}
	}
	tgt := dst.Host + "/platform/reloader"
	verifyAndPush(t, ctx, rel, p, mirror.PushOptions{Target: tgt})
	v, err := trust.NewVerifier(p)
	if err != nil {
		t.Fatal(err)
	}
	_, _, o := policyFor(t, v, rel, tgt)
	o.Trust = admission.Trust{PublicKeyPEM: string(s.PublicKeyPEM())}
	o.Name, o.Namespace = "rm", "reloader"
	return &mirroredRelease{src: src, dst: dst, rel: rel, target: tgt, opts: o, signer: s}
}

// policy-controller v0.13.1 cannot verify a key-signed release whose
// signatures are Sigstore bundles only: for a key authority it reads the
// cosign .sig/.att tags, which such a release has none of, and it refuses
// the bundle format for any authority but a keyless one
// (sigstore/policy-controller#1958). reloader-mirror policy refuses the
// format for such a release, naming why; the policy it writes for a key
// release with tags, applied to the bundle-only copy, denies the release
// itself, which is what the refusal spares the user.
func TestPolicyControllerCannotVerifyABundleOnlyKeyRelease(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("publishes a release and runs policy-controller")
	}
	ctx := testContext(t)
	m := mirrorBundleOnlyKeyRelease(t, ctx, startRegistry(t))
	if _, err := admission.Generate(m.opts, []admission.Format{admission.PolicyController}); err == nil || !strings.Contains(err.Error(), "sigstore/policy-controller#1958") {
		t.Fatalf("policy-controller policy for a bundle-only key release: %v, want a refusal naming the issue", err)
	}
	asIfTagged := m.opts
	asIfTagged.NoTags = false
	out, err := admission.Generate(asIfTagged, []admission.Format{admission.PolicyController})
	if err != nil {
		t.Fatal(err)
	}
	pt := newPolicyTester(t, ctx, out[admission.PolicyController])
	image := m.target + "/reloader@" + m.rel.Indexes["reloader"]
	got, err := pt.admit(ctx, image)
	// policy-controller reports whichever authority it evaluated last:
	// the signature's ("no signatures found") or the SBOM attestation's
	// ("no matching attestations"); either way it read no bundle.
	if !errors.Is(err, errDenied) || (!strings.Contains(got, "no signatures found") && !strings.Contains(got, "no matching attestations")) {
		t.Fatalf("policy-controller on the bundle-only release %s: %v: %s; want it denied for finding no signature or attestation", image, err, got)
	}
	t.Logf("denied, as documented: %s", got)
}

// Both Kyverno policies for a key-signed release whose signatures and
// attestations are Sigstore bundle referrers only, copied to the mirror (the
// CNCF distribution registry, which lists the referrers' artifactType):
// the release by digest from the mirror is admitted and an unsigned image
// pushed by digest into the mirrored repository is denied, by each format.
// The ClusterPolicy reads the bundles with its SigstoreBundle verifier and
// the release key; the ImageValidatingPolicy finds them itself.
func TestKyvernoAdmitsACopyOfABundleOnlyKeyRelease(t *testing.T) {
	t.Parallel()
	needKyverno(t)
	ctx := testContext(t)
	dst, err := testregistry.StartDistribution(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dst.Stop() })
	m := mirrorBundleOnlyKeyRelease(t, ctx, dst)
	e := startKyverno(t, ctx, kyvernoOptions{})
	ns := e.cp.Namespace(t)
	repo := m.target + "/reloader"
	unsigned := pushImage(t, ctx, repo, 1)
	cpol, ivpol := admission.KyvernoClusterPolicy, admission.Kyverno
	names := map[admission.Format]string{cpol: "rm-cpol-images", ivpol: "rm-ivpol-images"}
	cases := []kyvernoCase{
		{name: "the release by digest from the mirror", image: repo + "@" + m.rel.Indexes["reloader"]},
		{name: "the ubi variant by digest from the mirror", image: m.target + "/reloader-ubi@" + m.rel.Indexes["reloader-ubi"]},
		{name: "an unsigned image pushed by digest into the mirrored repository", image: unsigned.String(), why: map[admission.Format][]string{
			cpol:  {names[cpol], "release-signature-and-sbom", unsigned.String()},
			ivpol: {"Policy " + names[ivpol] + " failed", "not signed by", unsigned.String()},
		}},
	}
	gone := ""
	for _, f := range kyvernoFormats {
		o := m.opts
		o.Namespace, o.Name = ns, strings.TrimSuffix(names[f], "-images")
		out, err := admission.Generate(o, []admission.Format{f})
		if err != nil {
			t.Fatal(err)
		}
		if f == cpol && !strings.Contains(string(out[f]), "type: SigstoreBundle") {
			t.Fatalf("the ClusterPolicy of a bundle-only key release does not read bundles:\n%s", out[f])
		}
		pol := e.applyPolicy(t, ctx, out[f], ns, repo+":v1.2.3", gone)
		t.Run(string(f), func(t *testing.T) { e.check(t, ctx, ns, f, cases) })
		e.removePolicy(t, ctx, pol)
		gone = pol.GetName()
	}
}

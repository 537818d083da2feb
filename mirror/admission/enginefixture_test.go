package admission_test

import (
	"context"
	"testing"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/admission"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release/trust"
	testregistry "github.com/reloader-dev/reloader/test/registry"
)

// What the tests of both admission engines (Kyverno, policy-controller)
// start from.

// refusingProxy is where every non-loopback connection of the engine goes:
// nothing listens on the discard port, so any attempt to reach the public
// Sigstore (TUF, Rekor, Fulcio) or a registry elsewhere fails at once.
var refusingProxy = []string{"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost"}

// mirroredRelease is a release published by the pipeline into a source
// registry, verified and mirrored by digest into a second registry (the
// internal one), with the policy options reloader-mirror policy derives.
type mirroredRelease struct {
	src, dst *testregistry.Registry
	rel      *releasetest.Release
	target   string
	opts     admission.Options
	signer   releasetest.Signer
}

// publishAndMirror publishes a release signed by s (seed picks its digests),
// verifies it under p and mirrors it into dst, as both engines' tests start.
func publishAndMirror(t *testing.T, ctx context.Context, s releasetest.Signer, p trust.Policy, dst *testregistry.Registry, seed uint64) *mirroredRelease {
	t.Helper()
	src := startRegistry(t)
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	tgt := dst.Host + "/platform/reloader"
	verifyAndPush(t, ctx, rel, p, mirror.PushOptions{Target: tgt})
	v, err := trust.NewVerifier(p)
	if err != nil {
		t.Fatal(err)
	}
	_, _, o := policyFor(t, v, rel, tgt)
	return &mirroredRelease{src: src, dst: dst, rel: rel, target: tgt, opts: o, signer: s}
}

// verifyAndPush verifies rel at its source under p and mirrors it by digest
// as opts says (its Client is filled in), as reloader-mirror copy does.
func verifyAndPush(t *testing.T, ctx context.Context, rel *releasetest.Release, p trust.Policy, opts mirror.PushOptions) {
	t.Helper()
	v, err := trust.NewVerifier(p)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := registry.New(registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	verified, err := mirror.Verify(ctx, &mirror.RegistrySource{Client: cl, Name: "source"}, rel.LockJSON, rel.LockBundle, v)
	if err != nil {
		t.Fatalf("verifying %s: %v", rel.Lock.Version, err)
	}
	opts.Client = cl
	if _, err := verified.Push(ctx, opts); err != nil {
		t.Fatalf("mirroring %s: %v", rel.Lock.Version, err)
	}
}

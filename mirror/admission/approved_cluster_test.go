package admission_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/admission"
	"github.com/reloader-dev/reloader/mirror/registry"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/trust"
	testregistry "github.com/reloader-dev/reloader/test/registry"
)

func startRegistry(t *testing.T) *testregistry.Registry {
	t.Helper()
	reg, err := testregistry.StartInProcess(testregistry.InProcessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		remote.DefaultTransport.(*http.Transport).CloseIdleConnections()
		_ = reg.Stop()
	})
	return reg
}

// Two real releases mirrored into a real registry, then the policy for the
// newer one with the one before it kept (--keep-previous 1), applied to a
// real apiserver: both releases' images run, by index or platform digest;
// an unsigned image pushed by digest into the mirrored repository does not,
// and the denial names it.
func TestThePolicyAdmitsOnlyTheApprovedReleasesImages(t *testing.T) {
	t.Parallel()
	needControlPlane(t)
	ctx := testContext(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := trust.LoadPolicy(trust.PolicyFiles{KeyFile: writeFile(t, "cosign.pub", s.PublicKeyPEM())})
	if err != nil {
		t.Fatal(err)
	}
	v, err := trust.NewVerifier(p)
	if err != nil {
		t.Fatal(err)
	}
	src, dst := startRegistry(t), startRegistry(t)
	cl, err := registry.New(registry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	tgt := dst.Host + "/platform/reloader"
	var rels []*releasetest.Release
	for i, version := range []string{"v1.0.0", "v1.1.0"} {
		rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: s, Seed: uint64(41 + i), Version: version})
		if err != nil {
			t.Fatal(err)
		}
		v, err := trust.NewVerifier(p)
		if err != nil {
			t.Fatal(err)
		}
		verified, err := mirror.Verify(ctx, &mirror.RegistrySource{Client: cl, Name: "source"}, rel.LockJSON, rel.LockBundle, v)
		if err != nil {
			t.Fatalf("mirroring %s: %v", version, err)
		}
		if _, err := verified.Push(ctx, mirror.PushOptions{Client: cl, Target: tgt}); err != nil {
			t.Fatalf("mirroring %s: %v", version, err)
		}
		rels = append(rels, rel)
	}
	v1, v2 := rels[0], rels[1]

	// Anyone with push access to the mirror can put an image there by digest.
	rogue, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := rogue.Digest()
	if err != nil {
		t.Fatal(err)
	}
	rogueRef := tgt + "/reloader@" + rd.String()
	ref, err := name.NewDigest(rogueRef)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, rogue, remote.WithContext(ctx)); err != nil {
		t.Fatal(err)
	}

	// What reloader-mirror policy does for v1.1.0 with --keep-previous 1.
	l2, _, o := policyFor(t, v, v2, tgt)
	prev, err := mirror.PreviousReleases(ctx, cl, tgt+"/"+release.LockRepository, l2.Version, 1, v)
	if err != nil {
		t.Fatal(err)
	}
	if len(prev) != 1 || prev[0].Version != "v1.0.0" {
		t.Fatalf("previous releases at the target: %v", prev)
	}
	o.Approve(prev[0].Lock)
	ns := cp.Namespace(t)
	o.Trust = admission.Trust{PublicKeyPEM: string(s.PublicKeyPEM())}
	o.Namespace, o.Name = ns, "rm-"+ns
	out, err := admission.Generate(o, []admission.Format{admission.VAP})
	if err != nil {
		t.Fatal(err)
	}
	k := newKube(t, cp.Admin)
	for _, obj := range decode(t, out[admission.VAP]) {
		if err := k.apply(ctx, obj, false); err != nil {
			t.Fatalf("applying %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
		t.Cleanup(func() { k.delete(obj) })
	}
	probe := pod(ns, "probe", map[string]string{"probe": rogueRef}, nil)
	var last error
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		last = k.apply(ctx, probe, true)
		return last != nil, nil
	}); err != nil {
		t.Fatalf("the policy never took effect; last answer: %v", last)
	}

	platform := func(l *release.Lock) string {
		for _, a := range l.Artifacts {
			if a.Kind == release.KindImage && a.Name == "reloader" {
				return a.Digest
			}
		}
		t.Fatalf("release %s lists no platform image", l.Version)
		return ""
	}
	for i, tc := range []struct {
		name, image, want string
	}{
		{"v1.1.0 by index", tgt + "/reloader@" + v2.Indexes["reloader"], ""},
		{"v1.1.0 ubi by index", tgt + "/reloader-ubi@" + v2.Indexes["reloader-ubi"], ""},
		{"v1.1.0 by platform image", tgt + "/reloader@" + platform(v2.Lock), ""},
		{"v1.0.0, kept for the rollout", tgt + "/reloader:v1.0.0@" + v1.Indexes["reloader"], ""},
		{"v1.0.0 by platform image", tgt + "/reloader@" + platform(v1.Lock), ""},
		{"an unsigned image pushed by digest", rogueRef, "not an image of an approved release: container app image " + rogueRef + "; approved: Reloader v1.1.0, v1.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := k.apply(ctx, pod(ns, fmt.Sprintf("p%d", i), map[string]string{"app": tc.image}, nil), true)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("denied: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want a denial containing %q", err, tc.want)
			}
		})
	}
}

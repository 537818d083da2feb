package admission_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/reloader-dev/reloader/mirror"
	"github.com/reloader-dev/reloader/mirror/admission"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release/trust"
)

// kyvernoFormats are both Kyverno dialects: each meets the same cases on the
// same engine, so they provably deny the same images.
var kyvernoFormats = []admission.Format{admission.KyvernoClusterPolicy, admission.Kyverno}

var kyvernoPolicyGVR = map[string]schema.GroupVersionResource{
	"ClusterPolicy":         {Group: "kyverno.io", Version: "v1", Resource: "clusterpolicies"},
	"ImageValidatingPolicy": {Group: "policies.kyverno.io", Version: "v1", Resource: "imagevalidatingpolicies"},
}

func needKyverno(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Kyverno's admission controller; not in -short mode")
	}
}

// applyPolicy applies the one Kyverno policy of a format's output and waits
// until Kyverno enforces it: a pod by tag is denied naming it, and naming no
// policy in gone (one removed before, whose webhook may linger).
func (e *kyvernoEngine) applyPolicy(t *testing.T, ctx context.Context, policy []byte, ns, tagged, gone string) *unstructured.Unstructured {
	t.Helper()
	objs := decode(t, policy)
	if len(objs) != 1 || kyvernoPolicyGVR[objs[0].GetKind()].Resource == "" {
		t.Fatalf("the policy is not one Kyverno policy:\n%s", policy)
	}
	pol := objs[0]
	var last error
	// The policy validation webhook is registered once the controller is
	// up; until then the apiserver refuses Kyverno's objects.
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if done, err := e.proc.Exited(); done {
			return false, fmt.Errorf("kyverno exited: %v\n%s", err, e.proc.Tail(60))
		}
		last = e.k.apply(ctx, pol, false)
		return last == nil, nil
	}); err != nil {
		t.Fatalf("applying the %s: %v; last answer: %v", pol.GetKind(), err, last)
	}
	probe := pod(ns, "probe", map[string]string{"probe": tagged}, nil)
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if done, err := e.proc.Exited(); done {
			return false, fmt.Errorf("kyverno exited: %v\n%s", err, e.proc.Tail(60))
		}
		last = e.k.apply(ctx, probe, true)
		return last != nil && strings.Contains(last.Error(), pol.GetName()) && (gone == "" || !strings.Contains(last.Error(), gone)), nil
	}); err != nil {
		got, _ := e.k.dyn.Resource(kyvernoPolicyGVR[pol.GetKind()]).Get(ctx, pol.GetName(), metav1.GetOptions{})
		t.Fatalf("Kyverno never enforced the %s: %v; last answer to a pod by tag: %v\npolicy status: %v", pol.GetKind(), err, last, got)
	}
	return pol
}

func (e *kyvernoEngine) removePolicy(t *testing.T, ctx context.Context, pol *unstructured.Unstructured) {
	t.Helper()
	err := e.k.dyn.Resource(kyvernoPolicyGVR[pol.GetKind()]).Delete(ctx, pol.GetName(), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("removing the %s: %v", pol.GetKind(), err)
	}
}

// kyvernoCase is one pod sent through admission and what must come back.
type kyvernoCase struct {
	name, image string
	// why are, per format, substrings of the denial; none means admitted.
	why map[admission.Format][]string
}

func (e *kyvernoEngine) check(t *testing.T, ctx context.Context, ns string, f admission.Format, cases []kyvernoCase) {
	t.Helper()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := e.k.apply(ctx, pod(ns, fmt.Sprintf("case-%d", i), map[string]string{"app": tc.image}, nil), true)
			if len(tc.why) == 0 {
				if err != nil {
					t.Errorf("image %s denied: %v", tc.image, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("image %s admitted, want a denial", tc.image)
			}
			for _, w := range tc.why[f] {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("image %s: denial %q does not say %q", tc.image, err, w)
				}
			}
		})
	}
}

// mirrorOlder publishes an older release signed by s and mirrors it into
// m's target beside m (as a downgrade would, or an old release left in the
// registry): still signed and attested there, but not approved.
// It returns its reloader index at the target.
func mirrorOlder(t *testing.T, ctx context.Context, m *mirroredRelease, p trust.Policy, version string, seed uint64) string {
	t.Helper()
	src := startRegistry(t)
	rel, err := releasetest.Publish(ctx, releasetest.Options{Registry: src.Host, Signer: m.signer, Seed: seed, Version: version})
	if err != nil {
		t.Fatal(err)
	}
	verifyAndPush(t, ctx, rel, p, mirror.PushOptions{Target: m.target, AllowDowngrade: true})
	return m.target + "/reloader@" + rel.Indexes["reloader"]
}

// runKyvernoCases applies each of the Kyverno formats' policy for m in turn
// and checks every case against it (other is a signer that is not the
// release's; older a signed image of an older release at the mirror). The
// last format's policy stays applied. It returns the namespace and the
// release image it admitted.
func runKyvernoCases(t *testing.T, ctx context.Context, e *kyvernoEngine, m *mirroredRelease, other releasetest.Signer, older string, formats []admission.Format) (string, string) {
	t.Helper()
	ns := e.cp.Namespace(t)
	repo := m.target + "/reloader"
	index := m.rel.Indexes["reloader"]

	// Someone with push access to the mirror: an unsigned image by digest,
	// one signed by the release's own key or identity but without the SBOM
	// attestation, and one signed by someone else.
	unsigned := pushImage(t, ctx, repo, 1)
	unattested := pushImage(t, ctx, repo, 1)
	signOnly(t, ctx, m.signer, unattested)
	foreign := pushImage(t, ctx, repo, 1)
	signOnly(t, ctx, other, foreign)

	cpol, ivpol := admission.KyvernoClusterPolicy, admission.Kyverno
	names := map[admission.Format]string{cpol: "rm-cpol-images", ivpol: "rm-ivpol-images"}
	// verifyImages runs in Kyverno's mutating webhook, before the
	// ClusterPolicy's CEL rule, so its signature denials name that rule;
	// the ImageValidatingPolicy checks signatures before the CEL rules.
	bySignature := func(why string) map[admission.Format][]string {
		return map[admission.Format][]string{
			cpol:  {names[cpol], "release-signature-and-sbom", why},
			ivpol: {"Policy " + names[ivpol] + " failed"},
		}
	}
	unsignedWhy := bySignature("failed to verify image " + unsigned.String())
	unsignedWhy[ivpol] = append(unsignedWhy[ivpol], "not signed by", unsigned.String())
	unattestedWhy := bySignature("image attestations verification failed")
	unattestedWhy[ivpol] = append(unattestedWhy[ivpol], "no https://spdx.dev/Document attestation signed by", unattested.String())
	if !m.opts.Trust.Keyless() {
		// Kyverno v1.19.1 cannot verify a key-signed attestation without a
		// log entry (kyverno/kyverno#17109), so the ImageValidatingPolicy
		// leaves them to the lock: the digest is not one it approved.
		unattestedWhy[ivpol] = []string{"Policy " + names[ivpol] + " failed", "not an image of an approved release: container app image " + unattested.String()}
	}
	foreignWhy := bySignature("failed to verify image " + foreign.String())
	foreignWhy[ivpol] = append(foreignWhy[ivpol], "not signed by", foreign.String())
	both := func(why ...string) map[admission.Format][]string {
		return map[admission.Format][]string{cpol: append([]string{names[cpol]}, why...), ivpol: append([]string{names[ivpol]}, why...)}
	}
	tagWhy := both()
	tagWhy[cpol] = append(tagWhy[cpol], "not pinned by digest")
	tagWhy[ivpol] = append(tagWhy[ivpol], "image "+repo+":v1.2.3 does not have a digest")
	cases := []kyvernoCase{
		{name: "the release by digest from the mirror", image: repo + "@" + index},
		{name: "the ubi variant by digest from the mirror", image: m.target + "/reloader-ubi@" + m.rel.Indexes["reloader-ubi"]},
		{name: "an unsigned image pushed by digest into the mirrored repository", image: unsigned.String(), why: unsignedWhy},
		{name: "a signed image without the SPDX SBOM attestation", image: unattested.String(), why: unattestedWhy},
		{name: "an image pushed by digest and signed by someone else", image: foreign.String(), why: foreignWhy},
		{name: "the release by tag", image: repo + ":v1.2.3", why: tagWhy},
		{name: "the release from another registry", image: m.src.Host + "/reloader-dev/reloader@" + index,
			why: both("not from the mirrored repositories")},
	}
	cases = append(cases, kyvernoCase{name: "a signed and attested image of an older release at the mirror", image: older,
		why: both("not an image of an approved release: container app image " + older)})

	gone := ""
	for i, f := range formats {
		o := m.opts
		o.Namespace, o.Name = ns, strings.TrimSuffix(names[f], "-images")
		out, err := admission.Generate(o, []admission.Format{f})
		if err != nil {
			t.Fatal(err)
		}
		pol := e.applyPolicy(t, ctx, out[f], ns, repo+":v1.2.3", gone)
		t.Run(string(f), func(t *testing.T) { e.check(t, ctx, ns, f, cases) })
		if i < len(formats)-1 {
			e.removePolicy(t, ctx, pol)
			gone = pol.GetName()
		}
	}
	return ns, repo + "@" + index
}

// kyvernoFailsClosed stops Kyverno: its webhooks stay registered with
// failurePolicy Fail, so the apiserver refuses even the release, saying
// which webhook it could not call.
func kyvernoFailsClosed(t *testing.T, ctx context.Context, e *kyvernoEngine, ns, image string) {
	t.Helper()
	t.Run("with the webhook unreachable, pods are refused", func(t *testing.T) {
		if err := e.proc.Stop(10 * time.Second); err != nil {
			t.Logf("stopping kyverno: %v", err)
		}
		err := e.k.apply(ctx, pod(ns, "down", map[string]string{"app": image}, nil), true)
		if err == nil {
			t.Fatal("the release was admitted with Kyverno down: the webhook fails open")
		}
		for _, w := range []string{"failed calling webhook", "kyverno", "connection refused"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("denial %q does not say %q", err, w)
			}
		}
	})
	remote.DefaultTransport.(*http.Transport).CloseIdleConnections()
}

// signatureCacheOutlivesDeletion deletes the release image's cosign
// signature at the mirror: Kyverno caches a successful verification (per
// policy, rule and image, --imageVerifyCacheTTLDuration, 60m by default), so
// the image stays admitted until the entry expires (docs/enforce.md).
func signatureCacheOutlivesDeletion(t *testing.T, ctx context.Context, e *kyvernoEngine, ns, image string) {
	t.Helper()
	t.Run("a verified image stays admitted for the cache TTL after its signature is gone", func(t *testing.T) {
		d, err := name.NewDigest(image)
		if err != nil {
			t.Fatal(err)
		}
		sigTag := d.Context().Tag(strings.Replace(d.DigestStr(), ":", "-", 1) + ".sig")
		if _, err := remote.Head(sigTag, remote.WithContext(ctx)); err != nil {
			t.Fatalf("the mirror holds no cosign signature %s: %v", sigTag, err)
		}
		if err := remote.Delete(sigTag, remote.WithContext(ctx)); err != nil {
			t.Fatalf("deleting %s: %v", sigTag, err)
		}
		if _, err := remote.Head(sigTag, remote.WithContext(ctx)); err == nil {
			t.Fatalf("%s is still there after deleting it", sigTag)
		}
		if err := e.k.apply(ctx, pod(ns, "cached", map[string]string{"app": image}, nil), true); err != nil {
			t.Errorf("the release, verified before, was denied once its signature was deleted: the cache is off? %v", err)
		}
	})
}

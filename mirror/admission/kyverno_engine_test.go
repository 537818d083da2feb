package admission_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/theupdateframework/go-tuf"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/mirror/admission"
	"github.com/reloader-dev/reloader/release/releasetest"
	"github.com/reloader-dev/reloader/release/trust"
	"github.com/reloader-dev/reloader/test/controlplane"
	"github.com/reloader-dev/reloader/test/process"
	testregistry "github.com/reloader-dev/reloader/test/registry"
	"github.com/reloader-dev/reloader/test/tools"
)

// signOnly signs ref as the release does, with s, but attaches no SBOM
// attestation.
func signOnly(t *testing.T, ctx context.Context, s releasetest.Signer, ref name.Digest) {
	t.Helper()
	sg, err := s.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	signAs(t, ctx, sg, ref, false)
}

// kyvernoEngine is Kyverno's admission controller running out of cluster
// (--serverIP) as a real webhook of its own test apiserver: its webhooks are
// cluster-wide and fail closed, so it never shares the package's apiserver.
type kyvernoEngine struct {
	cp   *controlplane.ControlPlane
	k    *kube
	proc *process.Process
	// tufMirror and tufRoot are the offline TUF repository Kyverno reads
	// the keyless trusted root from (empty for key-signed releases).
	tufMirror, tufRoot string
}

const kyvernoModuleVersion = "github.com/kyverno/kyverno@v1.19.1"

// kyvernoOptions are the engine's settings beyond the defaults.
type kyvernoOptions struct {
	// TrustedRootJSON, when set, is served to Kyverno as trusted_root.json
	// through a TUF repository on disk (--enableTuf --tufMirror file://).
	TrustedRootJSON []byte
	// Args are extra admission controller flags.
	Args []string
}

func startKyverno(t *testing.T, ctx context.Context, opts kyvernoOptions) *kyvernoEngine {
	t.Helper()
	bin, err := tools.Binary(ctx, tools.Kyverno, "kyverno")
	if err != nil {
		t.Fatal(err)
	}
	c, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	c.LogsOnFailure(t)
	e := &kyvernoEngine{cp: c, k: newKube(t, c.Admin)}
	e.installCRDs(t, ctx)
	for _, obj := range []map[string]any{
		{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "kyverno"}},
		// Kyverno's own configuration, as its chart installs it; the
		// webhooks leave the control plane's namespaces alone.
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "kyverno", "namespace": "kyverno"}, "data": map[string]any{
			"webhooks": `[{"namespaceSelector":{"matchExpressions":[{"key":"kubernetes.io/metadata.name","operator":"NotIn","values":["kube-system","kyverno"]}]}}]`,
		}},
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "kyverno-metrics", "namespace": "kyverno"}},
	} {
		if err := e.k.apply(ctx, &unstructured.Unstructured{Object: obj}, false); err != nil {
			t.Fatal(err)
		}
	}
	port, err := process.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := process.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	args := []string{
		"--kubeconfig=" + c.AdminKubeconfig,
		"--serverIP=127.0.0.1:" + strconv.Itoa(port),
		"--webhookServerHost=127.0.0.1",
		"--webhookServerPort=" + strconv.Itoa(port),
		"--caSecretName=kyverno-svc.kyverno.svc.kyverno-tls-ca",
		"--tlsSecretName=kyverno-svc.kyverno.svc.kyverno-tls-pair",
		"--backgroundServiceAccountName=system:serviceaccount:kyverno:kyverno-background-controller",
		"--reportsServiceAccountName=system:serviceaccount:kyverno:kyverno-reports-controller",
		"--metricsPort=" + strconv.Itoa(metrics),
		"--controllerRuntimeMetricsAddress=0",
		"--admissionReports=false",
		"-v=2",
	}
	if opts.TrustedRootJSON != nil {
		e.tufMirror, e.tufRoot = tufRepository(t, opts.TrustedRootJSON)
		root, err := os.ReadFile(e.tufRoot)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, "--enableTuf", "--tufMirror=file://"+e.tufMirror, "--tufRootRaw="+base64.StdEncoding.EncodeToString(root))
	}
	args = append(args, opts.Args...)
	env := append([]string{
		"KYVERNO_NAMESPACE=kyverno", "KYVERNO_SERVICEACCOUNT_NAME=kyverno-admission-controller",
		"KYVERNO_DEPLOYMENT=dummy", "KYVERNO_POD_NAME=dummy", "INIT_CONFIG=kyverno", "METRICS_CONFIG=kyverno-metrics",
		"TUF_ROOT=" + filepath.Join(dir, "tuf"), "DOCKER_CONFIG=" + dir,
	}, refusingProxy...)
	p, err := process.Start(process.Options{Name: "kyverno", Path: bin, Args: args, Env: env, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	e.proc = p
	t.Cleanup(func() { _ = p.Stop(10 * time.Second) })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kyverno log:\n%s", p.Tail(120))
		}
	})
	return e
}

// installCRDs creates every CRD Kyverno v1.19.1 ships, as shipped.
func (e *kyvernoEngine) installCRDs(t *testing.T, ctx context.Context) {
	t.Helper()
	dir := filepath.Join(moduleDir(t, kyvernoModuleVersion), "config", "crds")
	var files []string
	if err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ri := e.k.dyn.Resource(crdGVR)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd unstructured.Unstructured
		if err := yaml.Unmarshal(b, &crd.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := ri.Create(ctx, &crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("installing CRD %s: %v", crd.GetName(), err)
		}
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		var crd unstructured.Unstructured
		_ = yaml.Unmarshal(b, &crd.Object)
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
			got, err := ri.Get(ctx, crd.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				if c := c.(map[string]any); c["type"] == "Established" && c["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		}); err != nil {
			t.Fatalf("CRD %s never became established: %v", crd.GetName(), err)
		}
	}
	e.k.mapper.Reset()
}

// tufRepository writes a TUF repository on disk whose one target is the
// trusted root: how an air-gapped site hands Kyverno its Sigstore root
// (Kyverno's SigstoreBundle verifier reads trusted_root.json only via TUF).
// It returns the repository directory and its root.json.
func tufRepository(t *testing.T, trustedRootJSON []byte) (repoDir, rootJSON string) {
	t.Helper()
	dir := t.TempDir()
	r, err := tuf.NewRepo(tuf.FileSystemStore(dir, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Init(false); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"root", "targets", "snapshot", "timestamp"} {
		if _, err := r.GenKey(role); err != nil {
			t.Fatal(err)
		}
	}
	staged := filepath.Join(dir, "staged", "targets")
	if err := os.MkdirAll(staged, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(staged, "trusted_root.json"), trustedRootJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.AddTarget("trusted_root.json", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if err := r.Timestamp(); err != nil {
		t.Fatal(err)
	}
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "repository"), filepath.Join(dir, "repository", "root.json")
}

var clusterPolicyGVR = schema.GroupVersionResource{Group: "kyverno.io", Version: "v1", Resource: "clusterpolicies"}

// applyPolicy applies the ClusterPolicy and waits until Kyverno reports it
// ready and its webhooks deny a pod by tag, so that the cases after it meet
// an engine that enforces it.
func (e *kyvernoEngine) applyPolicy(t *testing.T, ctx context.Context, policy []byte, ns, tagged string) {
	t.Helper()
	objs := decode(t, policy)
	if len(objs) != 1 || objs[0].GetKind() != "ClusterPolicy" {
		t.Fatalf("the kyverno format is not one ClusterPolicy:\n%s", policy)
	}
	cpol := objs[0]
	var last error
	// The policy validation webhook is registered once the controller is
	// up; until then the apiserver refuses kyverno.io objects.
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if done, err := e.proc.Exited(); done {
			return false, fmt.Errorf("kyverno exited: %v\n%s", err, e.proc.Tail(60))
		}
		last = e.k.apply(ctx, cpol, false)
		return last == nil, nil
	}); err != nil {
		t.Fatalf("applying the ClusterPolicy: %v; last answer: %v", err, last)
	}
	probe := pod(ns, "probe", map[string]string{"probe": tagged}, nil)
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if done, err := e.proc.Exited(); done {
			return false, fmt.Errorf("kyverno exited: %v\n%s", err, e.proc.Tail(60))
		}
		last = e.k.apply(ctx, probe, true)
		return last != nil && strings.Contains(last.Error(), cpol.GetName()), nil
	}); err != nil {
		got, _ := e.k.dyn.Resource(clusterPolicyGVR).Get(ctx, cpol.GetName(), metav1.GetOptions{})
		t.Fatalf("Kyverno never enforced the policy: %v; last answer to a pod by tag: %v\npolicy status: %v", err, last, got)
	}
}

// kyvernoCase is one pod sent through admission and what must come back.
type kyvernoCase struct {
	name, image string
	// want are substrings of the denial; none means admitted.
	want []string
}

func (e *kyvernoEngine) check(t *testing.T, ctx context.Context, ns string, cases []kyvernoCase) {
	t.Helper()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := e.k.apply(ctx, pod(ns, fmt.Sprintf("case-%d", i), map[string]string{"app": tc.image}, nil), true)
			if len(tc.want) == 0 {
				if err != nil {
					t.Errorf("image %s denied: %v", tc.image, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("image %s admitted, want a denial", tc.image)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("image %s: denial %q does not say %q", tc.image, err, w)
				}
			}
		})
	}
}

func needKyverno(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Kyverno's admission controller; not in -short mode")
	}
}

// The ClusterPolicy reloader-mirror policy writes for a key-signed release,
// enforced by Kyverno's own admission controller as a webhook of a real
// apiserver, offline: the release by digest from the mirror is admitted; an
// unsigned image pushed by digest into the mirrored repository, an image
// signed with the release key but without its SPDX SBOM, the release by tag
// and the release from another registry are denied; with the webhook down,
// pods are refused, saying why.
func TestKyvernoEnforcesTheKeySignedPolicy(t *testing.T) {
	t.Parallel()
	needKyverno(t)
	ctx := testContext(t)
	s, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p, err := trust.LoadPolicy(trust.PolicyFiles{KeyFile: writeFile(t, "cosign.pub", s.PublicKeyPEM())})
	if err != nil {
		t.Fatal(err)
	}
	m := publishAndMirror(t, ctx, s, p, startRegistry(t), 23)
	m.opts.Trust = admission.Trust{PublicKeyPEM: string(s.PublicKeyPEM())}
	other, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := startKyverno(t, ctx, kyvernoOptions{})
	ns, image := runKyvernoCases(t, ctx, e, m, other)

	// docs/enforce.md: Kyverno caches a successful verification (per
	// policy, rule and image, --imageVerifyCacheTTLDuration, 60m by
	// default), so a signature removed from the registry stops admitting
	// the image only when the entry expires.
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
	kyvernoFailsClosed(t, ctx, e, ns, image)
}

// The same for a keyless release signed by a VirtualSigstore with entries in
// its transparency log, the log required (no --insecure-ignore-tlog): Kyverno
// reads the trusted root through an offline TUF repository on disk.
func TestKyvernoEnforcesTheKeylessPolicy(t *testing.T) {
	t.Parallel()
	needKyverno(t)
	ctx := testContext(t)
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	const identity = "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3"
	const issuer = "https://token.actions.githubusercontent.com"
	s := releasetest.Signer{Sigstore: vs, Identity: identity, Issuer: issuer, Tlog: true}
	rootJSON, err := s.TrustedRootJSON()
	if err != nil {
		t.Fatal(err)
	}
	p, err := trust.LoadPolicy(trust.PolicyFiles{Identity: identity, Issuer: issuer, TrustedRootFile: writeFile(t, "trusted_root.json", rootJSON), IgnoreSCT: true})
	if err != nil {
		t.Fatal(err)
	}
	// The mirror is the CNCF distribution registry: Kyverno finds bundles
	// by the artifactType of the referrers listing, which go-containerregistry's
	// in-process registry reports as the config media type (so Kyverno
	// would see no bundle), while the mirror's tag-fallback index, as
	// distribution serves it, carries the bundles' artifactType.
	dst, err := testregistry.StartDistribution(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dst.Stop() })
	m := publishAndMirror(t, ctx, s, p, dst, 23)
	m.opts.Trust = admission.Trust{Identity: identity, Issuer: issuer, TrustedRootJSON: rootJSON, IgnoreSCT: true}
	// Same Sigstore, same issuer, another workflow's identity.
	other := releasetest.Signer{Sigstore: vs, Identity: "https://github.com/someone-else/fork/.github/workflows/release.yml@refs/tags/v1.2.3", Issuer: issuer, Tlog: true}
	e := startKyverno(t, ctx, kyvernoOptions{TrustedRootJSON: rootJSON})
	ns, image := runKyvernoCases(t, ctx, e, m, other)
	kyvernoFailsClosed(t, ctx, e, ns, image)
}

// runKyvernoCases applies the ClusterPolicy for m and checks every case
// (other is a signer that is not the release's); it returns the namespace and the release image it admitted.
func runKyvernoCases(t *testing.T, ctx context.Context, e *kyvernoEngine, m *mirroredRelease, other releasetest.Signer) (string, string) {
	t.Helper()
	ns := e.cp.Namespace(t)
	o := m.opts
	o.Namespace = ns
	out, err := admission.Generate(o, []admission.Format{admission.Kyverno})
	if err != nil {
		t.Fatal(err)
	}
	policy := out[admission.Kyverno]
	repo := m.target + "/reloader"
	index := m.rel.Indexes["reloader"]
	e.applyPolicy(t, ctx, policy, ns, repo+":v1.2.3")

	// Someone with push access to the mirror: an unsigned image by digest,
	// and one signed with the release's own key or identity but without
	// the SBOM attestation.
	unsigned := pushImage(t, ctx, repo, 1)
	unattested := pushImage(t, ctx, repo, 1)
	signOnly(t, ctx, m.signer, unattested)
	foreign := pushImage(t, ctx, repo, 1)
	signOnly(t, ctx, other, foreign)

	e.check(t, ctx, ns, []kyvernoCase{
		{name: "the release by digest from the mirror", image: repo + "@" + index},
		{name: "the ubi variant by digest from the mirror", image: m.target + "/reloader-ubi@" + m.rel.Indexes["reloader-ubi"]},
		// verifyImages runs in Kyverno's mutating webhook, before the CEL
		// rule's validating one, so these denials name the signature rule.
		{name: "an unsigned image pushed by digest into the mirrored repository", image: unsigned.String(),
			want: []string{"reloader-mirror-images", "release-signature-and-sbom", "failed to verify image " + unsigned.String()}},
		{name: "a signed image without the SPDX SBOM attestation", image: unattested.String(),
			want: []string{"reloader-mirror-images", "release-signature-and-sbom", "image attestations verification failed"}},
		{name: "an image pushed by digest and signed by someone else", image: foreign.String(),
			want: []string{"reloader-mirror-images", "release-signature-and-sbom", "failed to verify image " + foreign.String()}},
		{name: "the release by tag", image: repo + ":v1.2.3", want: []string{"not pinned by digest"}},
		{name: "the release from another registry", image: m.src.Host + "/reloader-dev/reloader@" + index,
			want: []string{"not from the mirrored repositories"}},
	})

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

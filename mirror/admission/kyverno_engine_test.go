package admission_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/theupdateframework/go-tuf"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/mirror/admission"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/release/trust"
	"github.com/reloader-dev/reloader/test/controlplane"
	"github.com/reloader-dev/reloader/test/process"
	testregistry "github.com/reloader-dev/reloader/test/registry"
	"github.com/reloader-dev/reloader/test/tools"
	"github.com/reloader-dev/reloader/test/virtualsigstore"
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

// Both Kyverno policies reloader-mirror policy writes for a key-signed
// release, the ClusterPolicy and the ImageValidatingPolicy, enforced in turn
// by Kyverno's own admission controller as a webhook of a real apiserver,
// offline, against the same cases: the release by digest from the mirror is
// admitted; an unsigned image pushed by digest into the mirrored repository,
// an image signed by another key, an image signed with the release key but
// without its SPDX SBOM, the release by tag, the release from another
// registry and a signed image of an older release at the mirror are denied;
// with the webhook down, pods are refused, saying why.
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
	older := mirrorOlder(t, ctx, m, p, "v1.1.0", 24)
	other, err := releasetest.NewKeySigner(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := startKyverno(t, ctx, kyvernoOptions{})
	ns, image := runKyvernoCases(t, ctx, e, m, other, older, kyvernoFormats)
	signatureCacheOutlivesDeletion(t, ctx, e, ns, image)
	kyvernoFailsClosed(t, ctx, e, ns, image)
}

// The same for a keyless release signed by a VirtualSigstore with entries in
// its transparency log, the log required (no --insecure-ignore-tlog): the
// ClusterPolicy's Kyverno reads the trusted root through an offline TUF
// repository on disk; the ImageValidatingPolicy carries the root and names
// the same repository, served on loopback.
func TestKyvernoEnforcesTheKeylessPolicy(t *testing.T) {
	t.Parallel()
	enforceKeylessPolicy(t, false)
}

// The same for a keyless release signed without a transparency log, its
// signatures timestamped only by the VirtualSigstore's TSA, under a trusted
// root that lists the TSA and no log (no --insecure-ignore-tlog): both
// Kyverno formats take the TSA's signed timestamp as the time source.
func TestKyvernoEnforcesTheTimestampOnlyKeylessPolicy(t *testing.T) {
	t.Parallel()
	enforceKeylessPolicy(t, true)
}

// enforceKeylessPolicy runs the keyless release's cases on Kyverno: signed
// with log entries under the VirtualSigstore's whole root, or, with
// timestampOnly, with TSA timestamps only under a root without its log.
func enforceKeylessPolicy(t *testing.T, timestampOnly bool) {
	t.Helper()
	needKyverno(t)
	ctx := testContext(t)
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	const identity = "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/v1.2.3"
	const issuer = "https://token.actions.githubusercontent.com"
	s, err := releasetest.NewKeylessSigner(vs, identity, issuer)
	if err != nil {
		t.Fatal(err)
	}
	s.Tlog = !timestampOnly
	rootJSON, err := s.TrustedRootJSONOf(virtualsigstore.Parts{NoLogs: timestampOnly})
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
	older := mirrorOlder(t, ctx, m, p, "v1.1.0", 24)
	// Same Sigstore, same issuer, another workflow's identity.
	other := s.WithIdentity("https://github.com/someone-else/fork/.github/workflows/release.yml@refs/tags/v1.2.3")
	e := startKyverno(t, ctx, kyvernoOptions{TrustedRootJSON: rootJSON})
	// The ImageValidatingPolicy names the TUF repository itself, which
	// Kyverno's sigstore-go client reads over HTTP only: the same
	// repository, served on loopback as a site's mirror would serve it.
	tufServer := httptest.NewServer(http.FileServer(http.Dir(e.tufMirror)))
	t.Cleanup(tufServer.Close)
	tufRoot, err := os.ReadFile(e.tufRoot)
	if err != nil {
		t.Fatal(err)
	}
	m.opts.KyvernoTUF = admission.TUF{Mirror: tufServer.URL, RootJSON: tufRoot}
	if !timestampOnly {
		ns, image := runKyvernoCases(t, ctx, e, m, other, older, kyvernoFormats)
		kyvernoFailsClosed(t, ctx, e, ns, image)
		return
	}
	ns, image := runKyvernoCases(t, ctx, e, m, other, older, []admission.Format{admission.KyvernoClusterPolicy})
	ivpolNeedsARekorKey(t, ctx, e, m, s, ns, image)
	kyvernoFailsClosed(t, ctx, e, ns, image)
}

// ivpolNeedsARekorKey shows why reloader-mirror policy refuses the
// ImageValidatingPolicy for a trusted root without a log: Kyverno v1.19.1
// reads Rekor public keys from the root its TUF client serves before every
// keyless verification, even with the log ignored. The policy written for
// the whole root with the log waived (the most it could be) denies the
// release while Kyverno's TUF repository serves the timestamp-only root.
func ivpolNeedsARekorKey(t *testing.T, ctx context.Context, e *kyvernoEngine, m *mirroredRelease, s releasetest.Signer, ns, image string) {
	t.Helper()
	t.Run("the ImageValidatingPolicy cannot verify under a TUF root without a log", func(t *testing.T) {
		o := m.opts
		o.Namespace, o.Name = ns, "rm-ivpol"
		if _, err := admission.Generate(o, []admission.Format{admission.Kyverno}); err == nil || !strings.Contains(err.Error(), "no Rekor public keys found in trusted root") {
			t.Fatalf("the ImageValidatingPolicy for a timestamp-only root: %v, want it refused", err)
		}
		whole, err := s.TrustedRootJSON()
		if err != nil {
			t.Fatal(err)
		}
		o.Trust.TrustedRootJSON, o.Trust.IgnoreTlog = whole, true
		out, err := admission.Generate(o, []admission.Format{admission.Kyverno})
		if err != nil {
			t.Fatal(err)
		}
		// The ClusterPolicy runKyvernoCases left applied goes first, so that the
		// denial is the ImageValidatingPolicy's; this one stays for the
		// fail-closed check.
		cpol := &unstructured.Unstructured{}
		cpol.SetKind("ClusterPolicy")
		cpol.SetName("rm-cpol-images")
		e.removePolicy(t, ctx, cpol)
		e.applyPolicy(t, ctx, out[admission.Kyverno], ns, m.target+"/reloader:v1.2.3", cpol.GetName())
		err = e.k.apply(ctx, pod(ns, "rekorless", map[string]string{"app": image}, nil), true)
		if err == nil || !strings.Contains(err.Error(), "Policy rm-ivpol-images failed") {
			t.Fatalf("the release under the ImageValidatingPolicy: %v, want it denied", err)
		}
		if !strings.Contains(e.proc.Tail(400), "no Rekor public keys found in trusted root") {
			t.Errorf("Kyverno denied the release, but its log does not say it found no Rekor key:\n%s", e.proc.Tail(40))
		}
	})
}

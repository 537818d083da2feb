package airgap_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/internal/exitcode"
	"github.com/reloader-dev/reloader/publish/local"
	"github.com/reloader-dev/reloader/publish/pipeline"
	"github.com/reloader-dev/reloader/publish/releasetest"
	"github.com/reloader-dev/reloader/publish/sign"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/release/verify"
	"github.com/reloader-dev/reloader/test/chartrun"
	"github.com/reloader-dev/reloader/test/controlplane"
	"github.com/reloader-dev/reloader/test/virtualsigstore"

	"k8s.io/apimachinery/pkg/util/wait"
)

// helmChartLayer is the media type of a Helm chart's content in an OCI
// artifact.
const helmChartLayer = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"

// install takes the chart from registry B by the digest `values` printed,
// installs it with the Helm SDK and those values into the real apiserver,
// then runs the controller binary taken out of the mirrored image under the
// chart's ServiceAccount and has it roll a Deployment.
func (d *drill) install() error {
	ctx := d.ctx
	text, err := os.ReadFile(d.valuesFile)
	if err != nil {
		return err
	}
	chartRef := ""
	for _, f := range strings.Fields(string(text)) {
		if strings.HasPrefix(f, "oci://") {
			chartRef = strings.TrimPrefix(f, "oci://")
		}
	}
	if chartRef == "" {
		return fmt.Errorf("values printed no oci:// chart reference:\n%s", text)
	}
	var vals map[string]any
	if err := yaml.Unmarshal(text, &vals); err != nil {
		return fmt.Errorf("reading the values: %w", err)
	}
	img, _ := vals["image"].(map[string]any)
	imageRepo, _ := img["repository"].(string)
	imageDigest, _ := img["digest"].(string)
	if imageRepo == "" || !strings.HasPrefix(imageDigest, "sha256:") {
		return fmt.Errorf("values pin no image by digest:\n%s", text)
	}
	// The mirror's account reads registry B, from the same Docker config
	// (DOCKER_CONFIG), as a cluster's pull secret would.
	auth := remote.WithAuthFromKeychain(authn.DefaultKeychain)
	chartDigest, err := name.NewDigest(chartRef, name.Insecure)
	if err != nil {
		return fmt.Errorf("chart reference %q is not by digest: %w", chartRef, err)
	}
	chartImg, err := remote.Image(chartDigest, remote.WithContext(ctx), auth)
	if err != nil {
		return fmt.Errorf("pulling the chart %s from registry B: %w", chartDigest, err)
	}
	chartLayers, err := chartImg.Layers()
	if err != nil {
		return err
	}
	var chartTgz []byte
	for _, l := range chartLayers {
		if mt, _ := l.MediaType(); mt == helmChartLayer {
			rc, err := l.Compressed()
			if err != nil {
				return err
			}
			chartTgz, err = io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return err
			}
		}
	}
	if chartTgz == nil {
		return fmt.Errorf("%s has no %s layer", chartDigest, helmChartLayer)
	}
	ch, err := loader.LoadArchive(bytes.NewReader(chartTgz))
	if err != nil {
		return fmt.Errorf("loading the chart from registry B: %w", err)
	}

	ns := "reloader"
	kubeconfig := filepath.Join(d.work, "admin.kubeconfig")
	if err := controlplane.WriteKubeconfig(cp.Admin, kubeconfig); err != nil {
		return err
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		return fmt.Errorf("helm: %w", err)
	}
	inst := action.NewInstall(cfg)
	inst.ReleaseName, inst.Namespace, inst.CreateNamespace = "reloader", ns, true
	if _, err := inst.RunWithContext(ctx, ch, vals); err != nil {
		return fmt.Errorf("helm install %s: %w", chartDigest, err)
	}

	admin, err := controlplaneClient()
	if err != nil {
		return err
	}
	deps, err := admin.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(deps.Items) != 1 {
		return fmt.Errorf("the install created deployments %v: %v", deps, err)
	}
	dep := &deps.Items[0]
	if got := dep.Spec.Template.Spec.Containers[0].Image; got != imageRepo+"@"+imageDigest {
		return fmt.Errorf("the installed Deployment runs image %q, want %s@%s", got, imageRepo, imageDigest)
	}
	bin, err := d.binaryFromImage(imageRepo+"@"+imageDigest, auth, version)
	if err != nil {
		return err
	}
	if !linksAt(bin, linkedModule, d.linkedVersion) {
		return fmt.Errorf("the mirrored controller does not link %s %s", linkedModule, d.linkedVersion)
	}
	saCfg, err := cp.ServiceAccountConfig(ctx, ns, dep.Spec.Template.Spec.ServiceAccountName)
	if err != nil {
		return err
	}
	saKubeconfig := filepath.Join(d.work, "sa.kubeconfig")
	if err := controlplane.WriteKubeconfig(saCfg, saKubeconfig); err != nil {
		return err
	}
	p, err := chartrun.Start(ctx, chartrun.Options{Binary: bin, Deployment: dep, Kubeconfig: saKubeconfig, PodNamespace: ns, Dir: d.work})
	if err != nil {
		return err
	}
	// It keeps running: the upgrade replaces it as a rollout would.
	d.controller = p
	d.t.Cleanup(func() { _ = d.controller.Stop(10 * time.Second) })
	d.t.Logf("helm installed %s (chart %s) in namespace %s; controller from %s@%s linux/amd64 runs as ServiceAccount %s",
		ch.Metadata.Name, chartDigest.DigestStr(), ns, imageRepo, imageDigest, dep.Spec.Template.Spec.ServiceAccountName)
	if err := rollout(ctx, admin); err != nil {
		return fmt.Errorf("%w\ncontroller log:\n%s", err, p.Tail(40))
	}
	return nil
}

// binaryFromImage takes /reloader out of the linux/amd64 image of the
// index ref, pulled from its registry by digest.
func (d *drill) binaryFromImage(ref string, auth remote.Option, version string) (string, error) {
	dg, err := name.NewDigest(ref, name.Insecure)
	if err != nil {
		return "", err
	}
	idx, err := remote.Index(dg, remote.WithContext(d.ctx), auth)
	if err != nil {
		return "", fmt.Errorf("pulling %s: %w", dg, err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return "", err
	}
	var img v1.Image
	for _, m := range im.Manifests {
		if m.Platform != nil && m.Platform.OS == "linux" && m.Platform.Architecture == "amd64" {
			if img, err = idx.Image(m.Digest); err != nil {
				return "", err
			}
		}
	}
	if img == nil {
		return "", fmt.Errorf("%s has no linux/amd64 image", dg)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return "", fmt.Errorf("%s linux/amd64 holds no reloader binary", dg)
		}
		if err != nil {
			return "", err
		}
		if h.Typeflag == tar.TypeReg && filepath.Base(h.Name) == "reloader" {
			// One file per version: the older one is still running.
			out := filepath.Join(d.work, "mirrored", version, "reloader")
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return "", err
			}
			f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
			if err != nil {
				return "", err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return "", err
			}
			return out, f.Close()
		}
	}
}

func controlplaneClient() (kubernetes.Interface, error) {
	return kubernetes.NewForConfig(cp.Admin)
}

// rollout changes a ConfigMap an annotated Deployment uses and waits for
// the controller to roll it.
func rollout(ctx context.Context, admin kubernetes.Interface) error {
	ns := "drill-app"
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"k": "1"}}
	if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return err
	}
	labels := map[string]string{"app": "web"}
	web := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"reloader.stakater.com/auto": "true"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "web", Image: "registry.invalid/web:1",
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}},
			}}}},
		},
	}
	if _, err := admin.AppsV1().Deployments(ns).Create(ctx, web, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := waitFor(ctx, func() (bool, error) {
		got, err := admin.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, ok := got.Annotations["reloader.dev/applied-hashes"]
		return ok, errors.New("the controller has not adopted Deployment web")
	}); err != nil {
		return err
	}
	cm.Data["k"] = "2"
	if _, err := admin.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return err
	}
	return waitFor(ctx, func() (bool, error) {
		got, err := admin.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got.Generation < 2 {
			return false, errors.New("Deployment web was not rolled after its ConfigMap changed")
		}
		for _, e := range got.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "STAKATER_APP_CONFIGMAP" && e.Value != "" {
				return true, nil
			}
		}
		return false, errors.New("Deployment web was not rolled after its ConfigMap changed")
	})
}

// waitFor polls cond for up to a minute. On timeout it returns what cond
// last reported, or the timeout itself when cond reported nothing: a step
// that never held must never pass.
func waitFor(ctx context.Context, cond func() (bool, error)) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok, nil
	})
	if err != nil && last != nil {
		return last
	}
	return err
}

// tamper presents the real archive altered in each way an attacker or a
// broken transfer would, and wants exit 3 with registry B unchanged.
func (d *drill) tamper() error {
	before, err := d.catalogB()
	if err != nil {
		return err
	}
	lockBytes, err := os.ReadFile(filepath.Join(d.work, "release", release.LockFileName))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(d.work, "other-key"), 0o700); err != nil {
		return err
	}
	otherKey, otherPub, err := sign.GenerateKey(filepath.Join(d.work, "other-key"), nil)
	if err != nil {
		return err
	}
	other, err := sign.FromKey(sign.KeyOptions{PrivateKeyPath: otherKey})
	if err != nil {
		return err
	}
	otherBundle, err := other.Blob(d.ctx, lockBytes)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(d.archive)
	if err != nil {
		return err
	}
	largest := ""
	var largestSize int64
	if err := eachEntry(raw, func(h *tar.Header, _ []byte) {
		if strings.Contains(h.Name, "blobs/sha256/") && h.Size > largestSize {
			largest, largestSize = h.Name, h.Size
		}
	}); err != nil {
		return err
	}
	cases := []struct {
		name string
		file func(string) error
		key  string
	}{
		{"a flipped byte in a blob", rewrite(raw, func(h *tar.Header, b []byte) ([]byte, bool) {
			if h.Name == largest {
				b = slices.Clone(b)
				b[len(b)/2] ^= 0x01
			}
			return b, true
		}), ""},
		{"an edited lock", rewrite(raw, func(h *tar.Header, b []byte) ([]byte, bool) {
			if filepath.Base(h.Name) == release.LockFileName {
				b = bytes.Replace(b, []byte(`"version": "`+version+`"`), []byte(`"version": "v1.2.4"`), 1)
			}
			return b, true
		}), ""},
		{"a lock signed by another key", rewrite(raw, func(h *tar.Header, b []byte) ([]byte, bool) {
			if filepath.Base(h.Name) == release.LockFileName+".sigstore.json" {
				b = otherBundle
			}
			return b, true
		}), ""},
		{"a missing lock", rewrite(raw, func(h *tar.Header, b []byte) ([]byte, bool) {
			return b, !strings.HasPrefix(filepath.Base(h.Name), release.LockFileName)
		}), ""},
		// An attacker rewrites the checksum manifest too: then the lock's
		// signature is what refuses.
		{"an edited lock, checksums recomputed", resummed(raw, func(h *tar.Header, b []byte) []byte {
			if filepath.Base(h.Name) == release.LockFileName {
				b = bytes.Replace(b, []byte(`"version": "`+version+`"`), []byte(`"version": "v1.2.4"`), 1)
			}
			return b
		}), ""},
		{"another key's lock, checksums recomputed", resummed(raw, func(h *tar.Header, b []byte) []byte {
			if filepath.Base(h.Name) == release.LockFileName+".sigstore.json" {
				b = otherBundle
			}
			return b
		}), ""},
		{"a truncated archive", func(p string) error { return os.WriteFile(p, raw[:len(raw)/2], 0o644) }, ""},
		{"a path-traversal entry", func(p string) error {
			return os.WriteFile(p, appendEntry(raw, "../../etc/reloader-evil", []byte("x")), 0o644)
		}, ""},
		{"a wrong --key", func(p string) error { return os.WriteFile(p, raw, 0o644) }, otherPub},
	}
	var errs []error
	for i, c := range cases {
		p := filepath.Join(d.work, fmt.Sprintf("tampered-%d.tar", i))
		if err := c.file(p); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		key := d.pubKey
		if c.key != "" {
			key = c.key
		}
		res, err := d.runMirror("", false, "", "import", "-f", p, "--key", key, "--target", d.regB.Host+"/platform/tampered")
		if err != nil {
			return err
		}
		msg := firstLine(res.Stderr)
		d.t.Logf("%-30s exit %d: %s", c.name, res.Code, msg)
		if res.Code != int(exitcode.Refused) {
			errs = append(errs, fmt.Errorf("%s: exit %d, want %d: %s", c.name, res.Code, int(exitcode.Refused), tail(res.Stderr)))
		}
		if strings.HasSuffix(c.name, "checksums recomputed") && strings.Contains(res.Stderr, "checksum") {
			errs = append(errs, fmt.Errorf("%s: refused by the checksum manifest, so the signature was not tested: %s", c.name, msg))
		}
	}
	after, err := d.catalogB()
	if err != nil {
		return err
	}
	if !slices.Equal(before, after) {
		errs = append(errs, fmt.Errorf("registry B's catalog changed: %v -> %v", before, after))
	}
	return errors.Join(errs...)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func (d *drill) catalogB() ([]string, error) {
	reg, err := name.NewRegistry(d.regB.Host, name.Insecure)
	if err != nil {
		return nil, err
	}
	repos, err := remote.Catalog(d.ctx, reg,
		remote.WithAuth(&authn.Basic{Username: d.bAdmin.Username, Password: d.bAdmin.Password}))
	if err != nil {
		return nil, fmt.Errorf("listing registry B as admin: %w", err)
	}
	slices.Sort(repos)
	return repos, nil
}

func eachEntry(raw []byte, fn func(*tar.Header, []byte)) error {
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the archive: %w", err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		fn(h, b)
	}
}

// rewrite returns a writer of the archive with edit applied to each entry
// (false drops it).
func rewrite(raw []byte, edit func(*tar.Header, []byte) ([]byte, bool)) func(string) error {
	return func(p string) error {
		var out bytes.Buffer
		tw := tar.NewWriter(&out)
		var werr error
		if err := eachEntry(raw, func(h *tar.Header, b []byte) {
			b, keep := edit(h, b)
			if !keep || werr != nil {
				return
			}
			h.Size = int64(len(b))
			if werr = tw.WriteHeader(h); werr == nil {
				_, werr = tw.Write(b)
			}
		}); err != nil {
			return err
		}
		if werr != nil {
			return werr
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return os.WriteFile(p, out.Bytes(), 0o644)
	}
}

// resummed is rewrite with the checksum manifest (checksums.sha256, in
// sha256sum's format, and the size it declares) brought in line with the
// edited entries.
func resummed(raw []byte, edit func(*tar.Header, []byte) []byte) func(string) error {
	sums := map[string]string{}
	var grown int64
	_ = eachEntry(raw, func(h *tar.Header, b []byte) {
		if e := edit(h, b); !bytes.Equal(e, b) {
			sum := sha256.Sum256(e)
			sums[h.Name] = hex.EncodeToString(sum[:])
			grown += int64(len(e) - len(b))
		}
	})
	return rewrite(raw, func(h *tar.Header, b []byte) ([]byte, bool) {
		if h.Name != "checksums.sha256" {
			return edit(h, b), true
		}
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			// The size the manifest declares, brought in line too.
			var files, size int64
			if n, _ := fmt.Sscanf(l, "# reloader-archive files=%d bytes=%d", &files, &size); n == 2 {
				lines[i] = fmt.Sprintf("# reloader-archive files=%d bytes=%d", files, size+grown)
				continue
			}
			if sum, file, ok := strings.Cut(l, "  "); ok && sums[file] != "" {
				_ = sum
				lines[i] = sums[file] + "  " + file
			}
		}
		return []byte(strings.Join(lines, "\n")), true
	})
}

func appendEntry(raw []byte, entry string, body []byte) []byte {
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	_ = eachEntry(raw, func(h *tar.Header, b []byte) {
		_ = tw.WriteHeader(h)
		_, _ = tw.Write(b)
	})
	_ = tw.WriteHeader(&tar.Header{Name: entry, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
	_, _ = tw.Write(body)
	_ = tw.Close()
	return out.Bytes()
}

const (
	workflowIdentity = "https://github.com/reloader-dev/reloader/.github/workflows/release.yml@refs/tags/" + version
	githubIssuer     = "https://token.actions.githubusercontent.com"
)

// forgedKeyless releases the real controller through the real pipeline,
// keyless, signed by a second VirtualSigstore whose CA the forger controls,
// exports it carrying that CA's trusted root and naming the expected
// identity and issuer, and wants the import against the genuine root
// refused with exit 3 before anything reaches registry B.
func (d *drill) forgedKeyless() error {
	genuine, err := ca.NewVirtualSigstore()
	if err != nil {
		return err
	}
	forger, err := ca.NewVirtualSigstore()
	if err != nil {
		return err
	}
	// Both CAs issue certificates as GitHub's Fulcio does, source
	// extensions included: the forgery is refused for its CA alone.
	genuineCA, err := virtualsigstore.NewGitHubCA(genuine)
	if err != nil {
		return err
	}
	forgerCA, err := virtualsigstore.NewGitHubCA(forger)
	if err != nil {
		return err
	}
	genuineRoot, forgedRoot := filepath.Join(d.work, "genuine-root.json"), filepath.Join(d.work, "forged-root.json")
	if err := genuineCA.WriteTrustedRoot(genuineRoot); err != nil {
		return err
	}
	if err := forgerCA.WriteTrustedRoot(forgedRoot); err != nil {
		return err
	}
	forgerTrust, err := forgerCA.TrustedRoot()
	if err != nil {
		return err
	}
	created := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	base, err := local.PushStandInBase(d.ctx, d.regA.Host+"/forged/ubi-minimal", created)
	if err != nil {
		return err
	}
	var logb bytes.Buffer
	_, err = pipeline.Run(d.ctx, pipeline.Options{
		Version: version, Commit: strings.Repeat("cd", 20), Source: "https://github.com/reloader-dev/reloader", BuilderID: workflowIdentity,
		Created: created, Now: created, ModuleDir: d.root, MainPackage: "./cmd/reloader",
		Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}}, NoScan: true,
		Registry: d.regA.Host + "/forged", StandardName: "reloader", UBIName: "reloader-ubi", UBIBase: base,
		Licenses: "Apache-2.0", OutDir: filepath.Join(d.work, "forged"), Log: &logb, SupportFile: releasetest.SupportTableFile(d.t, version),
		NewSigner: func(context.Context) (*sign.Signer, error) {
			return forgerCA.Signer(workflowIdentity, githubIssuer,
				virtualsigstore.SourceOf("https://github.com/reloader-dev/reloader", strings.Repeat("cd", 20), version))
		},
		Verify: verify.Options{TrustedRoot: forgerTrust, IgnoreSCT: true, IgnoreTlog: true},
		Remote: []remote.Option{remote.WithContext(d.ctx)},
	})
	if err != nil {
		return fmt.Errorf("forged keyless release: %w\n%s", err, logb.String())
	}
	archive := filepath.Join(d.work, "forged.tar")
	id := []string{"--certificate-identity", workflowIdentity, "--certificate-oidc-issuer", githubIssuer,
		"--insecure-ignore-sct", "--insecure-ignore-tlog", "--allow-unscanned"}
	if _, err := d.mustMirror("", "", append([]string{"export", "--lock-ref", d.regA.Host + "/forged/" + release.LockRepository + ":" + version,
		"--trusted-root", forgedRoot, "--to", archive}, id...)...); err != nil {
		return err
	}
	before, err := d.catalogB()
	if err != nil {
		return err
	}
	res, err := d.runMirror("", false, "", append([]string{"import", "-f", archive, "--trusted-root", genuineRoot,
		"--target", d.regB.Host + "/platform/forged"}, id...)...)
	if err != nil {
		return err
	}
	d.t.Logf("%-30s exit %d: %s", "a forged keyless archive", res.Code, firstLine(res.Stderr))
	if res.Code != int(exitcode.Refused) {
		return fmt.Errorf("forged keyless archive: exit %d, want %d: %s", res.Code, int(exitcode.Refused), tail(res.Stderr))
	}
	after, err := d.catalogB()
	if err != nil {
		return err
	}
	if !slices.Equal(before, after) {
		return fmt.Errorf("registry B's catalog changed: %v -> %v", before, after)
	}
	return nil
}

package airgap_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"

	"github.com/reloader-dev/reloader/internal/exitcode"
	"github.com/reloader-dev/reloader/release"
	"github.com/reloader-dev/reloader/test/chartrun"
	"github.com/reloader-dev/reloader/test/registry"
)

// The upgrade, as a user runs it for every release after the first: the
// next release, signed with the same key, carried across as a delta against
// the release the mirror holds, imported, and installed with helm upgrade
// by digest, while the controller keeps reloading.

func (d *drill) releaseV2() error {
	res, err := d.release("release-"+versionV2, filepath.Join(d.work, "policy.yaml"), true,
		"the next release: the same pipeline, signed with the same key",
		"--version", versionV2, "--key", filepath.Join(d.work, "release", "keys", "cosign.key"))
	if err != nil {
		return err
	}
	if res.Code != int(exitcode.OK) {
		return fmt.Errorf("release %s: exit %d\n%s", versionV2, res.Code, tail(res.Stderr))
	}
	return nil
}

func (d *drill) exportDelta() error {
	ref := d.regA.Host + "/reloader-dev/" + release.LockRepository + ":" + versionV2
	d.delta = filepath.Join(d.work, "reloader-"+versionV2+"-since-"+version+".tar")
	if _, err := d.mustMirror("connected side, upgrade: only what the release already mirrored lacks",
		"", "export", "--lock-ref", ref, "--key", d.pubKey, "--since", d.archive, "--to", d.delta); err != nil {
		return err
	}
	// The whole release, for comparison only.
	full := filepath.Join(d.work, "reloader-"+versionV2+".tar")
	if _, err := d.mustMirror("", "", "export", "--lock-ref", ref, "--key", d.pubKey, "--to", full); err != nil {
		return err
	}
	fs, err := os.Stat(full)
	if err != nil {
		return err
	}
	ds, err := os.Stat(d.delta)
	if err != nil {
		return err
	}
	d.t.Logf("%s: full archive %d bytes (%.1f MiB), delta against %s %d bytes (%.1f MiB, %.1f%%)", versionV2,
		fs.Size(), float64(fs.Size())/(1<<20), version, ds.Size(), float64(ds.Size())/(1<<20), 100*float64(ds.Size())/float64(fs.Size()))
	if ds.Size() >= fs.Size() {
		return fmt.Errorf("the delta (%d bytes) is not smaller than the full archive (%d bytes)", ds.Size(), fs.Size())
	}
	return os.Remove(full)
}

func (d *drill) deltaRefusedOnEmpty() error {
	empty, err := registry.StartInProcess(registry.InProcessOptions{})
	if err != nil {
		return err
	}
	defer func() { _ = empty.Stop() }()
	res, err := d.runMirror("", false, "", "import", "-f", d.delta, "--key", d.pubKey, "--target", empty.Host+"/platform/reloader")
	if err != nil {
		return err
	}
	if res.Code != int(exitcode.Refused) || !strings.Contains(res.Stderr, "import release "+version) {
		return fmt.Errorf("delta onto an empty registry: exit %d, want %d naming %s\n%s", res.Code, int(exitcode.Refused), version, tail(res.Stderr))
	}
	ref, err := name.NewRegistry(empty.Host, name.Insecure)
	if err != nil {
		return err
	}
	repos, err := remote.Catalog(d.ctx, ref)
	if err != nil {
		return err
	}
	if len(repos) != 0 {
		return fmt.Errorf("the refused delta import pushed %v", repos)
	}
	return nil
}

func (d *drill) importDelta() error {
	_, err := d.mustMirror("disconnected side, upgrade: checks the target holds the rest, verifies the whole release, tags last",
		"", "import", "-f", d.delta, "--key", d.pubKey, "--target", d.regB.Host+"/platform/reloader", "--receipt", filepath.Join(d.work, "receipt-"+versionV2+".json"))
	return err
}

func (d *drill) valuesV2Step() error {
	d.valuesV2 = filepath.Join(d.work, "values-"+versionV2+".yaml")
	_, err := d.mustMirror("the values for the new release; helm upgrade with the chart they name, by digest", d.valuesV2, "values", "-f", d.delta, "--key", d.pubKey, "--target", d.regB.Host+"/platform/reloader")
	if err != nil {
		return err
	}
	return nil
}

// pulledChart reads values printed by `values` and pulls the chart they
// name, by digest, from registry B.
func (d *drill) pulledChart(valuesFile string) (*chart.Chart, map[string]any, string, error) {
	text, err := os.ReadFile(valuesFile)
	if err != nil {
		return nil, nil, "", err
	}
	chartRef := ""
	for _, f := range strings.Fields(string(text)) {
		if strings.HasPrefix(f, "oci://") {
			chartRef = strings.TrimPrefix(f, "oci://")
		}
	}
	var vals map[string]any
	if err := yaml.Unmarshal(text, &vals); err != nil {
		return nil, nil, "", fmt.Errorf("reading the values: %w", err)
	}
	img, _ := vals["image"].(map[string]any)
	repo, _ := img["repository"].(string)
	digest, _ := img["digest"].(string)
	if chartRef == "" || repo == "" || !strings.HasPrefix(digest, "sha256:") {
		return nil, nil, "", fmt.Errorf("values pin no chart or image by digest:\n%s", text)
	}
	auth := remote.WithAuthFromKeychain(authn.DefaultKeychain)
	dg, err := name.NewDigest(chartRef, name.Insecure)
	if err != nil {
		return nil, nil, "", fmt.Errorf("chart reference %q is not by digest: %w", chartRef, err)
	}
	ci, err := remote.Image(dg, remote.WithContext(d.ctx), auth)
	if err != nil {
		return nil, nil, "", fmt.Errorf("pulling the chart %s: %w", dg, err)
	}
	layers, err := ci.Layers()
	if err != nil {
		return nil, nil, "", err
	}
	for _, l := range layers {
		if mt, _ := l.MediaType(); mt != helmChartLayer {
			continue
		}
		rc, err := l.Compressed()
		if err != nil {
			return nil, nil, "", err
		}
		tgz, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, nil, "", err
		}
		ch, err := loader.LoadArchive(bytes.NewReader(tgz))
		return ch, vals, repo + "@" + digest, err
	}
	return nil, nil, "", fmt.Errorf("%s has no %s layer", dg, helmChartLayer)
}

// upgrade runs helm upgrade with v2's chart and values, then replaces the
// running v1 controller with v2 as the Deployment's rollout does: the old
// one stops, a ConfigMap changes before the new one is up, and the new one
// applies that change, once; then the workload still reloads under v2.
func (d *drill) upgrade() error {
	ctx := d.ctx
	ch, vals, image, err := d.pulledChart(d.valuesV2)
	if err != nil {
		return err
	}
	ns := "reloader"
	kubeconfig := filepath.Join(d.work, "admin.kubeconfig")
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, ns, "secret", func(string, ...any) {}); err != nil {
		return fmt.Errorf("helm: %w", err)
	}
	up := action.NewUpgrade(cfg)
	up.Namespace = ns
	if _, err := up.RunWithContext(ctx, "reloader", ch, vals); err != nil {
		return fmt.Errorf("helm upgrade to %s: %w", versionV2, err)
	}
	admin, err := controlplaneClient()
	if err != nil {
		return err
	}
	deps, err := admin.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(deps.Items) != 1 {
		return fmt.Errorf("after the upgrade, deployments %v: %v", deps, err)
	}
	dep := &deps.Items[0]
	if got := dep.Spec.Template.Spec.Containers[0].Image; got != image {
		return fmt.Errorf("the upgraded Deployment runs %q, want %s", got, image)
	}
	bin, err := d.binaryFromImage(image, remote.WithAuthFromKeychain(authn.DefaultKeychain), versionV2)
	if err != nil {
		return err
	}
	const app = "drill-app"
	web, err := admin.AppsV1().Deployments(app).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		return err
	}
	gen0 := web.Generation
	// The rollout: the old controller goes, the change lands before the
	// new one is up.
	if err := d.controller.Stop(10 * time.Second); err != nil {
		return fmt.Errorf("stopping the %s controller: %w", version, err)
	}
	setData := func(v string) error {
		cm, err := admin.CoreV1().ConfigMaps(app).Get(ctx, "app", metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm.Data["k"] = v
		_, err = admin.CoreV1().ConfigMaps(app).Update(ctx, cm, metav1.UpdateOptions{})
		return err
	}
	if err := setData("during-upgrade"); err != nil {
		return err
	}
	p, err := chartrun.Start(ctx, chartrun.Options{Binary: bin, Deployment: dep, Kubeconfig: filepath.Join(d.work, "sa.kubeconfig"), PodNamespace: ns, Dir: d.work})
	if err != nil {
		return err
	}
	d.controller = p
	rolledTo := func(gen int64) error {
		return waitFor(ctx, func() (bool, error) {
			got, err := admin.AppsV1().Deployments(app).Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if got.Generation > gen {
				return false, fmt.Errorf("Deployment web was rolled %d times, want %d", got.Generation-gen0, gen-gen0)
			}
			return got.Generation == gen, fmt.Errorf("Deployment web is at generation %d, want %d", got.Generation, gen)
		})
	}
	if err := rolledTo(gen0 + 1); err != nil {
		return fmt.Errorf("the change made during the upgrade: %w\ncontroller log:\n%s", err, p.Tail(40))
	}
	// Once: the new controller does not roll it again for the same change.
	time.Sleep(3 * time.Second)
	if got, err := admin.AppsV1().Deployments(app).Get(ctx, "web", metav1.GetOptions{}); err != nil || got.Generation != gen0+1 {
		return fmt.Errorf("the change made during the upgrade was applied more than once (generation %d, want %d): %v\n%s", got.Generation, gen0+1, err, p.Tail(40))
	}
	if err := setData("after-upgrade"); err != nil {
		return err
	}
	if err := rolledTo(gen0 + 2); err != nil {
		return fmt.Errorf("under %s: %w\ncontroller log:\n%s", versionV2, err, p.Tail(40))
	}
	d.t.Logf("helm upgrade to %s (%s): a change during the controller's rollout applied once, the next one too", versionV2, image)
	return nil
}

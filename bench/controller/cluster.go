package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/reloader-dev/reloader/test/controlplane"
)

const (
	// Identities of the controllers, so the apiserver's audit log tells their
	// requests apart from the driver's and from the apiserver's own.
	controllerUser = "reloader-bench-controller"
	floorUser      = "reloader-bench-floor"

	workloadNS   = "bench-workloads"
	firstName    = "first-reload" // the Deployment and Secret of the first-reload measurement
	autoKey      = "reloader.stakater.com/auto"
	containerApp = "app"
)

// auditPolicy records only the two controller identities, at Metadata level:
// enough to count requests by verb and resource without slowing the
// apiserver down on the driver's 250 MB of creates.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: ["` + controllerUser + `", "` + floorUser + `"]
- level: None
`

// cluster is the control plane and the driver's view of the objects in it.
type cluster struct {
	cp        *controlplane.ControlPlane
	dir       string
	auditPath string
	// driver is the driver's own client; its transport counts every request
	// so it can be subtracted from the apiserver's metrics.
	driver   kubernetes.Interface
	counter  *requestCounter
	scaleNSs []string

	configMaps []*corev1.ConfigMap // cfg-NNNN, by workload index; only the driver writes them
	// cloneConfigMaps are cfg-clone-NNNN, used by the workloads of the
	// declared kind (-declared-share), nil at the other indices.
	cloneConfigMaps []*corev1.ConfigMap
	first           *corev1.Secret
	firstRevs       int
}

// startCluster starts the control plane; profiling serves the apiserver's
// /debug/pprof (-apiserver-profile), off otherwise as in every test.
func startCluster(ctx context.Context, dir string, profiling bool) (*cluster, error) {
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, fmt.Errorf("writing the audit policy: %w", err)
	}
	auditPath := filepath.Join(dir, "audit.log")
	args := []string{"--audit-policy-file=" + policy, "--audit-log-path=" + auditPath, "--audit-log-maxsize=0"}
	if profiling {
		args = append(args, "--profiling=true")
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{ExtraAPIServerArgs: args})
	if err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	c := &cluster{cp: cp, dir: dir, auditPath: auditPath, counter: newRequestCounter()}
	c.driver, err = kubernetes.NewForConfig(c.driverConfig())
	if err != nil {
		_ = cp.Stop()
		return nil, fmt.Errorf("building the driver's client: %w", err)
	}
	return c, nil
}

// driverConfig is the admin identity with a rate limit high enough never to
// be the bottleneck, protobuf to keep the driver's CPU out of the way of the
// controller's on a small machine, and the request counter.
func (c *cluster) driverConfig() *rest.Config {
	cfg := rest.CopyConfig(c.cp.Admin)
	cfg.QPS, cfg.Burst = 5000, 10000
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.UserAgent = "reloader-bench-driver"
	cfg.Wrap(c.counter.wrap)
	return cfg
}

// identityKubeconfig writes a kubeconfig for user (system:masters, so any
// controller's RBAC needs are met) and returns its path and client config.
func (c *cluster) identityKubeconfig(user string) (string, *rest.Config, error) {
	cfg, err := c.cp.UserConfig(user, "system:masters")
	if err != nil {
		return "", nil, fmt.Errorf("minting the identity %s: %w", user, err)
	}
	path := filepath.Join(c.dir, user+".kubeconfig")
	if err := controlplane.WriteKubeconfig(cfg, path); err != nil {
		return "", nil, err
	}
	return path, cfg, nil
}

func (c *cluster) namespaces() []string { return append([]string{workloadNS}, c.scaleNSs...) }

func (c *cluster) stop() error { return c.cp.Stop() }

// populate creates the namespaces, the scale data set (Secrets and
// ConfigMaps nobody uses, spread over the namespaces), the workloads of the
// latency and burst scenarios and the first-reload workload.
func (c *cluster) populate(ctx context.Context, cfg Config) (SetupStats, error) {
	t0 := time.Now()
	for i := range cfg.Namespaces {
		c.scaleNSs = append(c.scaleNSs, fmt.Sprintf("bench-scale-%02d", i))
	}
	for _, ns := range c.namespaces() {
		if err := controlplane.EnsureNamespace(ctx, c.driver, ns); err != nil {
			return SetupStats{}, err
		}
	}
	blob := make([]byte, cfg.SecretBytes)
	if _, err := rand.Read(blob); err != nil {
		return SetupStats{}, fmt.Errorf("generating Secret data: %w", err)
	}
	large := make([]byte, cfg.LargeBytes)
	if _, err := rand.Read(large); err != nil {
		return SetupStats{}, fmt.Errorf("generating Secret data: %w", err)
	}
	if err := c.createScaleData(ctx, cfg, blob, large); err != nil {
		return SetupStats{}, err
	}
	if err := c.createScaleWorkloads(ctx, cfg); err != nil {
		return SetupStats{}, err
	}
	if err := c.createWorkloads(ctx, cfg, blob); err != nil {
		return SetupStats{}, err
	}
	if cfg.DeclaredShare > 0 {
		if err := c.createDeclared(ctx, cfg); err != nil {
			return SetupStats{}, err
		}
	}
	objects := cfg.Secrets + cfg.ConfigMaps + 2*cfg.Workloads + 2 + cfg.ScaleWorkloads + 2*declaredCount(cfg.DeclaredShare, cfg.Workloads)
	nLarge := min(cfg.LargeSecrets, cfg.Secrets)
	bytes := int64(cfg.Secrets-nLarge)*int64(cfg.SecretBytes) + int64(nLarge)*int64(cfg.LargeBytes) + int64(cfg.ConfigMaps)*int64(cfg.ConfigMapBytes)
	return SetupStats{Objects: objects, DataMiB: float64(bytes) / (1 << 20), Seconds: time.Since(t0).Seconds()}, nil
}

func (c *cluster) createScaleData(ctx context.Context, cfg Config, blob, large []byte) error {
	cmData := string(fill(cfg.ConfigMapBytes))
	err := parallel(ctx, cfg.Secrets, cfg.CreateWorkers, func(ctx context.Context, i int) error {
		ns := c.scaleNSs[i%len(c.scaleNSs)]
		data := blob
		if i < cfg.LargeSecrets {
			data = large
		}
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("secret-%05d", i), Namespace: ns},
			// The index makes each Secret's hash distinct, as in real clusters.
			Data: map[string][]byte{"id": []byte(fmt.Sprint(i)), "blob": data},
		}
		if _, err := c.driver.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating Secret %s/%s: %w", ns, s.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return parallel(ctx, cfg.ConfigMaps, cfg.CreateWorkers, func(ctx context.Context, i int) error {
		ns := c.scaleNSs[i%len(c.scaleNSs)]
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("config-%05d", i), Namespace: ns},
			Data:       map[string]string{"id": fmt.Sprint(i), "data": cmData},
		}
		if _, err := c.driver.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating ConfigMap %s/%s: %w", ns, cm.Name, err)
		}
		return nil
	})
}

// scaleConfigMap is the name and namespace of scale ConfigMap i.
func (c *cluster) scaleConfigMap(i int) (string, string) {
	return fmt.Sprintf("config-%05d", i), c.scaleNSs[i%len(c.scaleNSs)]
}

// createScaleWorkloads creates cfg.ScaleWorkloads opted-in Deployments over
// the scale namespaces, Deployment i using scale ConfigMap i: a controller
// watches them all, and no scenario changes them.
func (c *cluster) createScaleWorkloads(ctx context.Context, cfg Config) error {
	return parallel(ctx, cfg.ScaleWorkloads, cfg.CreateWorkers, func(ctx context.Context, i int) error {
		cm, ns := c.scaleConfigMap(i)
		return c.createDeploymentIn(ctx, ns, fmt.Sprintf("scale-app-%05d", i), usesConfigMap(cm, "id", readsKey(i)))
	})
}

// churn updates scale ConfigMaps no workload uses, perSecond a second, until
// ctx ends: the unrelated background traffic of a large cluster. Errors
// (conflicts with nothing, a stopping control plane) only skip an update.
func (c *cluster) churn(ctx context.Context, cfg Config, perSecond int) {
	unused := cfg.ConfigMaps - cfg.ScaleWorkloads
	tick := time.NewTicker(time.Second / time.Duration(perSecond))
	defer tick.Stop()
	sem := make(chan struct{}, 16)
	for k := 0; ; k++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		select {
		case sem <- struct{}{}:
		default:
			continue // the apiserver is behind: do not pile up
		}
		go func() {
			defer func() { <-sem }()
			name, ns := c.scaleConfigMap(cfg.ScaleWorkloads + k%unused)
			patch := fmt.Appendf(nil, `{"data":{"churn":"%d"}}`, k)
			_, _ = c.driver.CoreV1().ConfigMaps(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		}()
	}
}

// createWorkloads creates, in workloadNS, one ConfigMap and one opted-in
// Deployment using it per workload, and the Secret and Deployment of the
// first-reload measurement.
func (c *cluster) createWorkloads(ctx context.Context, cfg Config, blob []byte) error {
	c.configMaps = make([]*corev1.ConfigMap, cfg.Workloads)
	err := parallel(ctx, cfg.Workloads, cfg.CreateWorkers, func(ctx context.Context, i int) error {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: configMapName(i), Namespace: workloadNS},
			Data:       map[string]string{"value": "initial"},
		}
		created, err := c.driver.CoreV1().ConfigMaps(workloadNS).Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating ConfigMap %s: %w", cm.Name, err)
		}
		c.configMaps[i] = created
		return c.createDeployment(ctx, deploymentName(i), usesConfigMap(cm.Name, "value", readsKey(i)))
	})
	if err != nil {
		return err
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: firstName, Namespace: workloadNS},
		Data:       map[string][]byte{"blob": blob, "rev": []byte("0")},
	}
	if c.first, err = c.driver.CoreV1().Secrets(workloadNS).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating Secret %s: %w", firstName, err)
	}
	// Read through secretKeyRef: the key the driver changes ("rev"), beside
	// a 50 KiB one (500 KiB at 10x) that a per-key controller never digests
	// again once recorded.
	ref := &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: firstName}, Key: "rev"}
	return c.createDeployment(ctx, firstName, corev1.Container{Env: []corev1.EnvVar{{Name: "REV", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: ref}}}})
}

// readsKey says whether workload i reads one key of its ConfigMap
// (configMapKeyRef) rather than all of it (envFrom): one in four does, so
// that --reload-on-used-keys-only has per-key records to keep and judge.
func readsKey(i int) bool { return i%4 == 3 }

// usesConfigMap is a container reading the ConfigMap named cm whole
// (envFrom) or, when byKey, only its key through configMapKeyRef.
func usesConfigMap(cm, key string, byKey bool) corev1.Container {
	if byKey {
		ref := &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Key: key}
		return corev1.Container{Env: []corev1.EnvVar{{Name: "VALUE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: ref}}}}
	}
	return corev1.Container{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}}
}

func (c *cluster) createDeployment(ctx context.Context, name string, ctr corev1.Container) error {
	return c.createDeploymentIn(ctx, workloadNS, name, ctr)
}

// createDeploymentIn creates an opted-in Deployment of one container, ctr
// (its environment) named and given an image here.
func (c *cluster) createDeploymentIn(ctx context.Context, ns, name string, ctr corev1.Container) error {
	ctr.Name, ctr.Image = containerApp, "registry.invalid/bench:1"
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{autoKey: "true"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{ctr}},
			},
		},
	}
	if _, err := c.driver.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating Deployment %s/%s: %w", ns, name, err)
	}
	return nil
}

// bumpConfigMap changes workload i's ConfigMap with one UPDATE. The driver is
// its only writer, so the resourceVersion it holds is current.
func (c *cluster) bumpConfigMap(ctx context.Context, i int, value string) error {
	cm := c.configMaps[i].DeepCopy()
	cm.Data["value"] = value
	updated, err := c.driver.CoreV1().ConfigMaps(workloadNS).Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("updating ConfigMap %s: %w", cm.Name, err)
	}
	c.configMaps[i] = updated
	return nil
}

func (c *cluster) bumpFirstSecret(ctx context.Context, rev int) error {
	s := c.first.DeepCopy()
	// A counter over the whole run, so that a repetition's first update is
	// a change whatever the previous one left.
	c.firstRevs++
	s.Data["rev"] = []byte(fmt.Sprint(c.firstRevs))
	updated, err := c.driver.CoreV1().Secrets(workloadNS).Update(ctx, s, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("updating Secret %s: %w", firstName, err)
	}
	c.first = updated
	return nil
}

func configMapName(i int) string  { return fmt.Sprintf("cfg-%04d", i) }
func deploymentName(i int) string { return fmt.Sprintf("app-%04d", i) }

// parallel runs fn for 0..n-1 on at most workers goroutines and returns the
// first error.
func parallel(ctx context.Context, n, workers int, fn func(context.Context, int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(workers, 1))
	for i := range n {
		g.Go(func() error { return fn(ctx, i) })
	}
	return g.Wait()
}

// fill returns n printable bytes.
func fill(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// profileAPIServer writes the apiserver's CPU profile over the next
// seconds to path; the burst it covers starts right after it is asked.
func (c *cluster) profileAPIServer(ctx context.Context, seconds int, path string) error {
	raw, err := c.driver.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
		Param("seconds", strconv.Itoa(seconds)).DoRaw(ctx)
	if err != nil {
		return fmt.Errorf("profiling the apiserver: %w", err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return fmt.Errorf("writing the apiserver's profile: %w", err)
	}
	return nil
}

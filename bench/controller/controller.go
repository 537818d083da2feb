package main

import (
	"bufio"
	"context"
	"crypto/sha1" //nolint:gosec // the floor writes the same SHA-1 marker Reloader writes; not a security use
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/reloader-dev/reloader/test/process"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// Placeholders are what -controller and -ready-url may refer to.
type Placeholders struct {
	Reloader    string // ./cmd/reloader, built on first use
	Kubeconfig  string // the controller's own identity
	MetricsAddr string // a free 127.0.0.1 port
	PprofAddr   string // another free 127.0.0.1 port
	Namespaces  string // every namespace the scenarios use, comma-separated
	Peer        string // $BENCH_PEER, in -peer-controller
}

// commandLine renders the -controller template. {{.Reloader}} triggers a
// build of ./cmd/reloader, so a foreign controller does not pay for it.
func commandLine(ctx context.Context, tmpl string, p *Placeholders, dir string) ([]string, error) {
	if strings.Contains(tmpl, ".Reloader") {
		bin, err := buildReloader(ctx, dir)
		if err != nil {
			return nil, err
		}
		p.Reloader = bin
	}
	s, err := render(tmpl, p)
	if err != nil {
		return nil, fmt.Errorf("rendering -controller: %w", err)
	}
	args := strings.Fields(s)
	if len(args) == 0 {
		return nil, fmt.Errorf("-controller is empty")
	}
	if !strings.Contains(args[0], "/") {
		if args[0], err = exec.LookPath(args[0]); err != nil {
			return nil, fmt.Errorf("finding the controller binary: %w", err)
		}
	}
	return args, nil
}

func render(tmpl string, p *Placeholders) (string, error) {
	t, err := template.New("cmd").Option("missingkey=error").Parse(tmpl)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, p); err != nil {
		return "", err
	}
	return b.String(), nil
}

// buildReloader is reloadertest's build of ./cmd/reloader, linked into dir.
func buildReloader(ctx context.Context, dir string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	built, err := reloadertest.BuildBinary(false)
	if err != nil {
		return "", err
	}
	// Each repetition asks again; the link from the last one is the same.
	bin := filepath.Join(dir, "reloader")
	if err := os.Remove(bin); err != nil && !os.IsNotExist(err) {
		return "", fmt.Errorf("building ./cmd/reloader: %w", err)
	}
	if err := os.Symlink(built, bin); err != nil {
		return "", fmt.Errorf("building ./cmd/reloader: %w", err)
	}
	return bin, nil
}

func placeholders(c *cluster, kubeconfig string) (*Placeholders, error) {
	metrics, err := process.FreePort()
	if err != nil {
		return nil, err
	}
	pprof, err := process.FreePort()
	if err != nil {
		return nil, err
	}
	return &Placeholders{
		Kubeconfig:  kubeconfig,
		MetricsAddr: fmt.Sprintf("127.0.0.1:%d", metrics),
		PprofAddr:   fmt.Sprintf("127.0.0.1:%d", pprof),
		Namespaces:  strings.Join(c.namespaces(), ","),
	}, nil
}

// startController launches the controller under test. It returns at once:
// the first-reload measurement starts its clock here.
func startController(args []string, dir, kubeconfig string) (*process.Process, error) {
	p, err := process.Start(process.Options{Name: "controller", Path: args[0], Args: args[1:], Dir: dir,
		Env: []string{"KUBECONFIG=" + kubeconfig}})
	if err != nil {
		return nil, fmt.Errorf("starting the controller: %w", err)
	}
	return p, nil
}

// waitHTTP200 polls url until it answers 200 and returns when it did.
func waitHTTP200(ctx context.Context, p *process.Process, url string) (time.Time, error) {
	var at time.Time
	ready := process.HTTPReady(url)
	err := p.WaitFor(ctx, 20*time.Millisecond, func(ctx context.Context) error {
		if err := ready(ctx); err != nil {
			return err
		}
		at = time.Now()
		return nil
	})
	return at, err
}

// memory reads the resident set of pid from /proc, in MiB: VmRSS now, VmHWM
// (the peak), and RssAnon and RssFile, which tell the heap and the runtime
// apart from the mapped pages of the binary.
func memory(pid int) (map[string]float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, fmt.Errorf("reading the controller's memory: %w", err)
	}
	out := map[string]float64{}
	for line := range strings.SplitSeq(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM" && name != "RssAnon" && name != "RssFile") {
			continue
		}
		var kb float64
		if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%g kB", &kb); err != nil {
			return nil, fmt.Errorf("parsing %s in /proc/%d/status: %w", name, pid, err)
		}
		out[name] = kb / 1024
	}
	if _, ok := out["VmRSS"]; !ok {
		return nil, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	return out, nil
}

// clockTicks is the unit of the CPU times in /proc/<pid>/stat (USER_HZ),
// 100 on every architecture Linux runs Go on; sysconf is not reachable
// without cgo.
const clockTicks = 100

// cpuTime is the CPU (user and system) the processes have used so far, from
// /proc/<pid>/stat, in steps of 1/clockTicks s.
func cpuTime(pids ...int) (time.Duration, error) {
	var total time.Duration
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
		}
		t, err := parseStatCPU(string(b))
		if err != nil {
			return 0, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
		}
		total += t
	}
	return total, nil
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line. The command name (field 2) is in parentheses and
// may itself hold spaces and parentheses, so fields are counted from the
// last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state): utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing CPU ticks %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// goMemstats reads the go_memstats_*_bytes gauges from a Prometheus
// endpoint, in MiB, keyed without prefix and suffix; nil when unavailable.
func goMemstats(ctx context.Context, url string) map[string]float64 {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, "go_memstats_") || !strings.HasSuffix(name, "_bytes") {
			continue
		}
		var v float64
		if _, err := fmt.Sscanf(value, "%g", &v); err == nil {
			out[strings.TrimSuffix(strings.TrimPrefix(name, "go_memstats_"), "_bytes")] = v / (1 << 20)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// saveHeapProfile fetches the controller's heap profile, for finding where
// the memory goes when the RSS target is missed.
func saveHeapProfile(ctx context.Context, pprofAddr, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+pprofAddr+"/debug/pprof/heap", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetching the heap profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetching the heap profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the heap profile: %w", err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("writing the heap profile: %w", err)
	}
	return f.Close()
}

// The floor's scopes (-floor-scope).
const (
	floorNamespace = "namespace"
	floorCluster   = "cluster"
)

// floor is the ideal controller the figures are compared with: one informer
// on the workload namespace's ConfigMaps (every namespace's, with
// -floor-scope cluster) and, per change, one strategic-merge
// PATCH of the Deployment known to use it, sent at once from its own
// goroutine. It has no workload cache, no queue, no Events and no record of
// applied hashes: whatever a real controller adds on top is its cost.
type floor struct {
	cs     kubernetes.Interface
	target map[string]string // ConfigMap name -> Deployment name
	mu     sync.Mutex
	first  error
}

func startFloor(ctx context.Context, cfg *rest.Config, workloads int, scope string) (*floor, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 5000, 10000
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the floor's client: %w", err)
	}
	fl := &floor{cs: cs, target: map[string]string{}}
	for i := range workloads {
		fl.target[configMapName(i)] = deploymentName(i)
	}
	var opts []informers.SharedInformerOption
	if scope != floorCluster {
		opts = append(opts, informers.WithNamespace(workloadNS))
	}
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, opts...)
	inf := f.Core().V1().ConfigMaps().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: func(o, n any) { fl.changed(ctx, o, n) }}); err != nil {
		return nil, fmt.Errorf("watching ConfigMaps in the floor: %w", err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("syncing the floor's ConfigMap watch: %w", ctx.Err())
	}
	return fl, nil
}

func (fl *floor) changed(ctx context.Context, o, n any) {
	old, ok1 := o.(*corev1.ConfigMap)
	cm, ok2 := n.(*corev1.ConfigMap)
	if !ok1 || !ok2 || cm.Namespace != workloadNS || maps.Equal(old.Data, cm.Data) {
		return
	}
	deploy, ok := fl.target[cm.Name]
	if !ok {
		return
	}
	patch, err := envPatch(cm)
	if err != nil {
		fl.fail(err)
		return
	}
	go func() {
		_, err := fl.cs.AppsV1().Deployments(cm.Namespace).Patch(ctx, deploy, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		if err != nil && ctx.Err() == nil {
			fl.fail(fmt.Errorf("floor: patching Deployment %s: %w", deploy, err))
		}
	}()
}

// fail keeps the first error, which the scenario reports.
func (fl *floor) fail(err error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.first == nil {
		fl.first = err
	}
}

func (fl *floor) err() error {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.first
}

// envPatch sets STAKATER_<NAME>_CONFIGMAP to the ConfigMap's hash, the same
// template change Reloader makes, so both runs cost the apiserver the same.
func envPatch(cm *corev1.ConfigMap) ([]byte, error) {
	h := sha1.New() //nolint:gosec // see import
	for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
		fmt.Fprintf(h, "%s=%s;", k, cm.Data[k])
	}
	env := map[string]any{"name": reloadVar(cm.Name), "value": hex.EncodeToString(h.Sum(nil))}
	container := map[string]any{"name": containerApp, "env": []any{env}}
	return json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{container}}}}})
}

// reloadVar is the variable Reloader's env-var strategy sets for the
// ConfigMap named name, spelled here rather than taken from the controller
// so the floor stays independent of the code it is the floor of.
func reloadVar(configMap string) string {
	return "STAKATER_" + strings.ToUpper(strings.ReplaceAll(configMap, "-", "_")) + "_CONFIGMAP"
}

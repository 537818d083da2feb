// Package controlplane runs a real Kubernetes control plane on loopback for
// tests and the demo: etcd, kube-apiserver with TLS and RBAC, and optionally
// kube-controller-manager so Deployments get real ReplicaSets.
//
// The binaries are the pinned upstream ones, compiled by hack/tools/ensure.sh;
// nothing is faked. Identities are minted on demand (client certificates from
// the control plane's own CA, or ServiceAccount tokens) so tests can prove what
// least-privilege RBAC allows and forbids.
package controlplane

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/reloader-dev/reloader/test/process"
	"github.com/reloader-dev/reloader/test/tools"
)

// Options configures a control plane.
type Options struct {
	// ControllerManager also starts kube-controller-manager with the workload
	// controllers (deployment, replicaset, statefulset, daemonset, job,
	// cronjob), garbage collection, namespace and serviceaccount controllers.
	ControllerManager bool
	// Dir holds data, certificates and logs. Empty means a new temporary
	// directory, removed by Stop.
	Dir string
	// BinDir holds etcd, kube-apiserver and kube-controller-manager. Empty
	// means build them (once per machine) with hack/tools/ensure.sh.
	BinDir string
	// ExtraAPIServerArgs are appended to the apiserver's command line.
	ExtraAPIServerArgs []string
}

// ControlPlane is a running control plane.
type ControlPlane struct {
	opts    Options
	dir     string
	ownsDir bool
	ca      *authority
	port    int

	etcd, apiserver, kcm *process.Process
	etcdURL              string
	apiserverArgs        []string

	// Admin is a system:masters identity, for test setup and assertions.
	Admin *rest.Config
	// AdminKubeconfig is the path of a kubeconfig file for Admin, for
	// processes (the controller under test, kubectl, a benchmark driver).
	AdminKubeconfig string
}

// Start builds (if needed) and starts the control plane and waits until the
// apiserver reports ready, and with ControllerManager until its controllers run.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	cp := &ControlPlane{opts: opts, dir: opts.Dir}
	if cp.dir == "" {
		d, err := os.MkdirTemp("", "reloader-controlplane-")
		if err != nil {
			return nil, fmt.Errorf("creating the control plane directory: %w", err)
		}
		cp.dir, cp.ownsDir = d, true
	}
	if err := cp.start(ctx); err != nil {
		logs := cp.Logs(60)
		_ = cp.Stop()
		return nil, fmt.Errorf("%w\n%s", err, logs)
	}
	return cp, nil
}

func (cp *ControlPlane) start(ctx context.Context) error {
	bin := cp.opts.BinDir
	if bin == "" {
		var err error
		if bin, err = tools.Dir(ctx, tools.ControlPlane); err != nil {
			return err
		}
	}
	ca, err := newAuthority("reloader-test-ca")
	if err != nil {
		return err
	}
	cp.ca = ca
	pki := filepath.Join(cp.dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", pki, err)
	}
	servingCert, servingKey, err := ca.issue("kube-apiserver", nil, true)
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{"ca.crt": ca.certPEM, "apiserver.crt": servingCert, "apiserver.key": servingKey} {
		if err := os.WriteFile(filepath.Join(pki, name), data, 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	if err := serviceAccountKey(filepath.Join(pki, "sa.key"), filepath.Join(pki, "sa.pub")); err != nil {
		return err
	}

	if err := cp.startEtcd(ctx, filepath.Join(bin, "etcd")); err != nil {
		return err
	}
	if err := cp.startAPIServer(ctx, filepath.Join(bin, "kube-apiserver"), pki); err != nil {
		return err
	}
	admin, err := cp.UserConfig("reloader-test-admin", "system:masters")
	if err != nil {
		return err
	}
	cp.Admin = admin
	cp.AdminKubeconfig = filepath.Join(cp.dir, "admin.kubeconfig")
	if err := WriteKubeconfig(admin, cp.AdminKubeconfig); err != nil {
		return err
	}
	if err := cp.waitAPIServerReady(ctx); err != nil {
		return err
	}
	if cp.opts.ControllerManager {
		if err := cp.startControllerManager(ctx, filepath.Join(bin, "kube-controller-manager")); err != nil {
			return err
		}
	}
	return nil
}

func (cp *ControlPlane) startEtcd(ctx context.Context, path string) error {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		client, err1 := process.FreePort()
		peer, err2 := process.FreePort()
		if err1 != nil || err2 != nil {
			return fmt.Errorf("choosing etcd ports: %v %v", err1, err2)
		}
		cp.etcdURL = fmt.Sprintf("http://127.0.0.1:%d", client)
		peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
		p, err := process.Start(process.Options{
			Name: "etcd", Path: path, Dir: cp.dir,
			Args: []string{
				"--name=default",
				"--data-dir=" + filepath.Join(cp.dir, "etcd-data"),
				"--listen-client-urls=" + cp.etcdURL,
				"--advertise-client-urls=" + cp.etcdURL,
				"--listen-peer-urls=" + peerURL,
				"--initial-advertise-peer-urls=" + peerURL,
				"--initial-cluster=default=" + peerURL,
				// Test data is disposable; fsync dominates etcd latency on CI disks.
				"--unsafe-no-fsync",
				"--log-level=warn",
			},
		})
		if err != nil {
			return err
		}
		cp.etcd = p
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		lastErr = p.WaitFor(wctx, 100*time.Millisecond, func(ctx context.Context) error {
			return process.HTTPReady(cp.etcdURL + "/health")(ctx)
		})
		cancel()
		if lastErr == nil {
			return nil
		}
		retry := p.IsAddrInUse()
		_ = p.Stop(5 * time.Second)
		if !retry {
			break
		}
	}
	return fmt.Errorf("starting etcd: %w", lastErr)
}

func (cp *ControlPlane) startAPIServer(ctx context.Context, path, pki string) error {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := process.FreePort()
		if err != nil {
			return err
		}
		cp.port = port
		cp.apiserverArgs = append([]string{
			"--etcd-servers=" + cp.etcdURL,
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--cert-dir=" + filepath.Join(cp.dir, "apiserver-certs"),
			"--tls-cert-file=" + filepath.Join(pki, "apiserver.crt"),
			"--tls-private-key-file=" + filepath.Join(pki, "apiserver.key"),
			"--client-ca-file=" + filepath.Join(pki, "ca.crt"),
			"--authorization-mode=RBAC",
			"--service-account-issuer=https://127.0.0.1:" + strconv.Itoa(port),
			"--service-account-key-file=" + filepath.Join(pki, "sa.pub"),
			"--service-account-signing-key-file=" + filepath.Join(pki, "sa.key"),
			"--service-cluster-ip-range=10.0.0.0/24",
			// Loopback-only hosts: the default reconciler publishes the
			// advertise address as the kubernetes Service endpoint and fails.
			"--endpoint-reconciler-type=none",
			// Pods are never scheduled here; the admission plugin would only
			// block ReplicaSets until the default ServiceAccount exists.
			"--disable-admission-plugins=ServiceAccount",
			"--allow-privileged=true",
			"--profiling=false",
		}, cp.opts.ExtraAPIServerArgs...)
		p, err := cp.launchAPIServer(path)
		if err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		lastErr = p.WaitFor(wctx, 100*time.Millisecond, func(ctx context.Context) error {
			// Any TLS answer means it is listening; readiness is checked as admin.
			return httpAny(ctx, cp.URL()+"/livez")
		})
		cancel()
		if lastErr == nil {
			return nil
		}
		retry := p.IsAddrInUse()
		_ = p.Stop(5 * time.Second)
		if !retry {
			break
		}
	}
	return fmt.Errorf("starting kube-apiserver: %w", lastErr)
}

func (cp *ControlPlane) launchAPIServer(path string) (*process.Process, error) {
	p, err := process.Start(process.Options{Name: "kube-apiserver", Path: path, Dir: cp.dir, Args: cp.apiserverArgs})
	if err != nil {
		return nil, err
	}
	cp.apiserver = p
	return p, nil
}

func (cp *ControlPlane) waitAPIServerReady(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(cp.Admin)
	if err != nil {
		return fmt.Errorf("building the admin client: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return cp.apiserver.WaitFor(wctx, 100*time.Millisecond, func(ctx context.Context) error {
		_, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	})
}

// RestartAPIServer stops the apiserver and starts it again on the same port
// and storage, for tests of how clients survive an apiserver outage. down is
// how long it stays stopped.
func (cp *ControlPlane) RestartAPIServer(ctx context.Context, down time.Duration) error {
	bin := cp.apiserverBinary()
	if err := cp.apiserver.Stop(10 * time.Second); err != nil {
		return err
	}
	select {
	case <-time.After(down):
	case <-ctx.Done():
		return ctx.Err()
	}
	if _, err := cp.launchAPIServer(bin); err != nil {
		return err
	}
	return cp.waitAPIServerReady(ctx)
}

func (cp *ControlPlane) apiserverBinary() string {
	if cp.opts.BinDir != "" {
		return filepath.Join(cp.opts.BinDir, "kube-apiserver")
	}
	d, _ := tools.Dir(context.Background(), tools.ControlPlane)
	return filepath.Join(d, "kube-apiserver")
}

func (cp *ControlPlane) startControllerManager(ctx context.Context, path string) error {
	port, err := process.FreePort()
	if err != nil {
		return err
	}
	p, err := process.Start(process.Options{
		Name: "kube-controller-manager", Path: path, Dir: cp.dir,
		Args: []string{
			"--kubeconfig=" + cp.AdminKubeconfig,
			"--authentication-kubeconfig=" + cp.AdminKubeconfig,
			"--authorization-kubeconfig=" + cp.AdminKubeconfig,
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--cert-dir=" + filepath.Join(cp.dir, "kcm-certs"),
			"--leader-elect=false",
			"--use-service-account-credentials=false",
			"--controllers=deployment-controller,replicaset-controller,statefulset-controller,daemonset-controller,job-controller,cronjob-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller",
			"--concurrent-deployment-syncs=10",
			"--concurrent-replicaset-syncs=10",
		},
	})
	if err != nil {
		return err
	}
	cp.kcm = p
	// The serviceaccount controller creating "default" in "default" proves the
	// controllers are running and talking to the apiserver.
	cs, err := kubernetes.NewForConfig(cp.Admin)
	if err != nil {
		return fmt.Errorf("building the admin client: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	return p.WaitFor(wctx, 200*time.Millisecond, func(ctx context.Context) error {
		_, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}

// URL is the apiserver's base URL.
func (cp *ControlPlane) URL() string { return "https://127.0.0.1:" + strconv.Itoa(cp.port) }

// PIDs are the process IDs of the components running (etcd, kube-apiserver,
// kube-controller-manager when started), for measuring what they cost.
func (cp *ControlPlane) PIDs() []int {
	var pids []int
	for _, p := range []*process.Process{cp.etcd, cp.apiserver, cp.kcm} {
		if p != nil {
			pids = append(pids, p.PID())
		}
	}
	return pids
}

// Dir is where the control plane keeps its data and logs.
func (cp *ControlPlane) Dir() string { return cp.dir }

// CAData is the PEM of the CA that signs the apiserver's serving certificate.
func (cp *ControlPlane) CAData() []byte { return cp.ca.certPEM }

// Logs returns the last n lines of every component's log.
func (cp *ControlPlane) Logs(n int) string {
	var b strings.Builder
	for _, p := range []*process.Process{cp.etcd, cp.apiserver, cp.kcm} {
		if p != nil {
			b.WriteString(p.Describe(n))
		}
	}
	return b.String()
}

// Stop ends every component and removes the directory if Start created it.
func (cp *ControlPlane) Stop() error {
	var errs []string
	for _, p := range []*process.Process{cp.kcm, cp.apiserver, cp.etcd} {
		if p == nil {
			continue
		}
		if err := p.Stop(10 * time.Second); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if cp.ownsDir && os.Getenv("RELOADER_KEEP_CONTROLPLANE") == "" {
		if err := os.RemoveAll(cp.dir); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("stopping the control plane: %s", strings.Join(errs, "; "))
	}
	return nil
}

// httpAny succeeds on any HTTP answer: the server is listening.
func httpAny(ctx context.Context, url string) error {
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 2 * time.Second} //nolint:gosec // readiness probe of our own loopback server
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// CompactEtcd compacts etcd's history up to its current revision, through
// etcd's JSON gateway, and returns that revision. Every resourceVersion
// before it is gone: a watch that resumes from one (after an apiserver
// restart, say) is told 410 Gone and must list again, as in a cluster whose
// etcd compacted while a client was away.
func (cp *ControlPlane) CompactEtcd(ctx context.Context) (int64, error) {
	var head struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
	}
	// A range over one key answers with the store's current revision.
	if err := etcdCall(ctx, cp.etcdURL+"/v3/kv/range", `{"key":"AA=="}`, &head); err != nil {
		return 0, fmt.Errorf("reading etcd's revision: %w", err)
	}
	rev, err := strconv.ParseInt(head.Header.Revision, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("reading etcd's revision %q: %w", head.Header.Revision, err)
	}
	body := fmt.Sprintf(`{"revision":"%d","physical":true}`, rev)
	if err := etcdCall(ctx, cp.etcdURL+"/v3/kv/compaction", body, nil); err != nil {
		return 0, fmt.Errorf("compacting etcd to revision %d: %w", rev, err)
	}
	return rev, nil
}

func etcdCall(ctx context.Context, url, body string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd answered %s: %s", resp.Status, data)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

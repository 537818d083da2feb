package controller_test

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// fipsOnly is the environment of a FIPS 140-only process: Go's FIPS module
// refuses every algorithm outside FIPS 140-3 (SHA-1, MD5, X25519 alone, ...),
// with a panic where an API cannot return an error.
const fipsOnly = "GODEBUG=fips140=only"

// The controller built against Go's certified FIPS 140-3 module
// (GOFIPS140=certified) and run with GODEBUG=fips140=only works end to end:
// TLS to the apiserver and to an alert receiver, leader election on a Lease,
// and a reload whose fingerprint is SHA-256 (SHA-1, stakater's, is refused
// there), in per-key mode with its fingerprint key made and used
// (HMAC-SHA-256). Asking it for SHA-1 fails at start with a message, not a panic at
// the first change.
func TestFIPSOnlyControllerReloadsEndToEnd(t *testing.T) {
	requireControlPlane(t)
	bin := reloadertest.FIPSBinary(t)

	version, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(version), "(fips140=on)") {
		t.Fatalf("--version of the FIPS build without GODEBUG: %q, %v; want the module on by default", version, err)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), fipsOnly)
	if version, err = cmd.CombinedOutput(); err != nil || !strings.Contains(string(version), "(fips140=only)") {
		t.Fatalf("--version under %s: %q, %v", fipsOnly, version, err)
	}
	cmd = exec.Command(bin, "--kubeconfig="+cp.AdminKubeconfig, "--hash-algorithm=sha1")
	cmd.Env = append(os.Environ(), fipsOnly)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "not allowed in FIPS 140-only mode") || strings.Contains(string(out), "panic") {
		t.Fatalf("--hash-algorithm=sha1 under %s: err %v, output:\n%s\nwant a refusal at start naming FIPS 140-only mode", fipsOnly, err, out)
	}

	alerts := newTLSReceiver(t)
	cs := cp.AdminClient(t)
	ns := cp.Namespace(t)
	reloadertest.MustCreate(t, cs, ns, reloadertest.ConfigMap("app", map[string]string{"v": "1"}))
	createDeployment(t, cs, ns, reloadertest.Deployment("app", auto(), usesConfigMap("app", "app")))
	r := &reloaderProc{reloadertest.Start(t, reloadertest.Options{Binary: bin, Kubeconfig: cp.AdminKubeconfig,
		Env: []string{fipsOnly, "SSL_CERT_FILE=" + alerts.caFile, "POD_NAME=fips-replica", "POD_NAMESPACE=" + ns,
			"ALERT_ON_RELOAD=true", "ALERT_SINK=raw", "ALERT_WEBHOOK_URL=" + alerts.srv.URL + "/alert"},
		// Per-key mode: the fingerprint key is made and used (HMAC-SHA-256) under fips140=only.
		Args: []string{"--namespaces=" + ns, "--enable-ha", "--ha-lock-name=reloader-fips-lock", "--reload-on-used-keys-only"}})}
	ctx := ctxFor(t)
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		l, err := cs.CoordinationV1().Leases(ns).Get(ctx, "reloader-fips-lock", metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false, "the FIPS controller holds no Lease"
		}
		return *l.Spec.HolderIdentity == "fips-replica", "Lease held by " + *l.Spec.HolderIdentity
	})
	waitRecorded(t, cs, ns, "app")

	updateConfigMapData(t, cs, ns, "app", map[string]string{"v": "2"})
	waitRevision(t, cs, ns, "app", 2, 0)
	got, _ := reloadertest.EnvOf(getDeployment(t, cs, ns, "app"), "app", "STAKATER_APP_CONFIGMAP")
	if want := hash.SHA256.ConfigMap(map[string]string{"v": "2"}, nil); got != want {
		t.Errorf("STAKATER_APP_CONFIGMAP = %q, want the SHA-256 fingerprint %q", got, want)
	}
	reloadertest.Eventually(t, 30*time.Second, func() (bool, string) {
		return len(alerts.received()) > 0, "no alert reached the TLS receiver"
	})
	if log := r.Tail(400); !strings.Contains(log, "fips140=only") || !strings.Contains(log, "per-key fingerprints are keyed") || strings.Contains(log, "panic") {
		t.Errorf("the controller's log must say fips140=only and keyed fingerprints, and hold no panic:\n%s", log)
	}
	if n := r.metric(t, `reloader_reload_executed_total{success="true"}`); n != 1 {
		t.Errorf("reloader_reload_executed_total{success=true} = %v, want 1", n)
	}
}

// tlsReceiver is an HTTPS alert receiver whose certificate the controller
// trusts through SSL_CERT_FILE, as a cluster's own CA bundle would be.
type tlsReceiver struct {
	srv    *httptest.Server
	caFile string
	mu     sync.Mutex
	bodies []string
}

func newTLSReceiver(t *testing.T) *tlsReceiver {
	r := &tlsReceiver{}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b))
		r.mu.Unlock()
	}))
	t.Cleanup(r.srv.Close)
	r.caFile = filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw})
	if err := os.WriteFile(r.caFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *tlsReceiver) received() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bodies...)
}

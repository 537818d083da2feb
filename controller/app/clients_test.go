package app

import (
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The cluster-wide watches have their own HTTP/1.1 connections, so a
// cluster's Secrets streaming in at start sit in the kernel's socket buffer,
// not in HTTP/2 stream buffers in the process; every other request shares
// the HTTP/2 connection.
func TestClusterWideWatchesUseHTTP1AndTheRestHTTP2(t *testing.T) {
	var mu sync.Mutex
	protos := map[string]string{} // user agent's request path -> protocol
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		protos[r.URL.Path] = r.Proto
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"SecretList","apiVersion":"v1","metadata":{},"items":[]}`))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()

	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: ca}
	cfg.AuthInfos["test"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "test"}
	cfg.CurrentContext = "test"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Kubeconfig = kubeconfig
	cl, err := newClients(o, &Resolved{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := cl.watch.CoreV1().Secrets("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("listing through the watch client: %v", err)
	}
	if _, err := cl.typed.CoreV1().Secrets("other").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("listing through the main client: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := protos["/api/v1/secrets"]; got != "HTTP/1.1" {
		t.Errorf("the watch client spoke %q, want HTTP/1.1", got)
	}
	if got := protos["/api/v1/namespaces/other/secrets"]; got != "HTTP/2.0" {
		t.Errorf("the main client spoke %q, want HTTP/2.0", got)
	}
}

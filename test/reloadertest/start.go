package reloadertest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/test/process"
)

// Options say how to run the controller under test.
type Options struct {
	// Binary is the reloader binary (from Binary or BuildBinary).
	Binary string
	// Kubeconfig the controller uses.
	Kubeconfig string
	// Args are the controller's flags; --kubeconfig and --metrics-addr
	// are added.
	Args []string
	// Env is its environment (KEY=value), beside what process.Start gives.
	Env []string
	// LogLines is how much of its log a failed test prints; 80 if zero.
	LogLines int
	// StdoutPath, when set, takes its stdout apart from the log (stderr).
	StdoutPath string
}

// Controller is a running controller under test.
type Controller struct {
	*process.Process
	// MetricsURL serves /metrics and /readyz ("http://127.0.0.1:port").
	MetricsURL string
}

// Start runs the controller on a free metrics port and waits for /readyz.
// When the test ends it stops the controller, fails the test if the race
// detector reported a data race in it (a -race binary prints the report and
// keeps running), and prints the log's tail if the test failed.
func Start(t testing.TB, o Options) *Controller {
	t.Helper()
	port, err := process.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	args := append([]string{"--kubeconfig=" + o.Kubeconfig, "--metrics-addr=" + addr}, o.Args...)
	p, err := process.Start(process.Options{Name: "reloader", Path: o.Binary, Args: args, Env: o.Env, Dir: t.TempDir(), StdoutPath: o.StdoutPath})
	if err != nil {
		t.Fatal(err)
	}
	lines := o.LogLines
	if lines == 0 {
		lines = 80
	}
	c := &Controller{Process: p, MetricsURL: "http://" + addr}
	t.Cleanup(func() {
		_ = p.Stop(10 * time.Second)
		if log, err := os.ReadFile(p.LogPath()); err == nil && strings.Contains(string(log), "WARNING: DATA RACE") {
			t.Errorf("the race detector reported a data race in the controller:\n%s", RaceReport(string(log)))
		}
		if t.Failed() {
			t.Logf("reloader log:\n%s", p.Tail(lines))
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.WaitFor(ctx, 50*time.Millisecond, process.HTTPReady(c.MetricsURL+"/readyz")); err != nil {
		t.Fatal(err)
	}
	return c
}

// RaceReport cuts the race detector's reports out of a log.
func RaceReport(log string) string {
	i := strings.Index(log, "WARNING: DATA RACE")
	if i < 0 {
		return ""
	}
	out := log[i:]
	if len(out) > 8000 {
		out = out[:8000]
	}
	return out
}

// WaitRecorded waits until the controller has recorded its baseline on a
// Deployment: from then on it has decided about it.
func WaitRecorded(t testing.TB, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	Eventually(t, 30*time.Second, func() (bool, string) {
		d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		_, ok := d.Annotations["reloader.dev/applied-hashes"]
		return ok, fmt.Sprintf("Deployment %s/%s has no applied-hashes record", ns, name)
	})
}

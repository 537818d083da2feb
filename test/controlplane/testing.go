package controlplane

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
)

// RunTests is a TestMain body: it starts one control plane for the package,
// stores it in *cp, runs the tests and stops it. A package whose control plane
// cannot start fails as a whole, loudly: tests of real behaviour are never
// skipped for want of the real thing.
func RunTests(m *testing.M, opts Options, cp **ControlPlane) int {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	started, err := Start(ctx, opts)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the test control plane: %v\n", err)
		return 1
	}
	*cp = started
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "tests failed; control plane logs:\n%s", started.Logs(80))
	}
	if err := started.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return code
}

// LogsOnFailure prints the component logs when t fails.
func (cp *ControlPlane) LogsOnFailure(t testing.TB) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("control plane logs:\n%s", cp.Logs(60))
		}
	})
}

var nsCounter atomic.Int64

// Namespace creates a namespace unique to the test, deleted when it ends.
func (cp *ControlPlane) Namespace(t testing.TB) string {
	t.Helper()
	cs := cp.AdminClient(t)
	name := fmt.Sprintf("%s-%d-%d", dnsLabel(t.Name()), time.Now().UnixNano()%100000, nsCounter.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := EnsureNamespace(ctx, cs, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = cs.CoreV1().Namespaces().Delete(ctx, name, deleteBackground())
	})
	return name
}

// AdminClient is a clientset with system:masters rights.
func (cp *ControlPlane) AdminClient(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cp.Admin)
	if err != nil {
		t.Fatalf("building the admin client: %v", err)
	}
	return cs
}

// dnsLabel turns a test name into the prefix of a valid namespace name.
func dnsLabel(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 40 {
		out = strings.Trim(out[:40], "-")
	}
	if out == "" {
		out = "test"
	}
	return out
}

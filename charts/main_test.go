package charts

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/test/controlplane"
)

var cp *controlplane.ControlPlane

// In -short mode (make unit) only the tests that need no apiserver run.
func TestMain(m *testing.M) {
	flag.Parse()
	var code int
	if testing.Short() {
		code = m.Run()
	} else {
		code = controlplane.RunTests(m, controlplane.Options{}, &cp)
	}
	for _, c := range cleanups {
		c()
	}
	os.Exit(code)
}

// needControlPlane skips in -short mode; every other run has a control plane
// or has already failed as a whole in TestMain.
func needControlPlane(t *testing.T) {
	t.Helper()
	if cp == nil {
		t.Skip("needs the real control plane; not started in -short mode")
	}
	cp.LogsOnFailure(t)
}

var (
	kubeVersionOnce sync.Once
	kubeVersion     string
	kubeMinor       int
	kubeVersionErr  error
)

// serverVersion is the apiserver's version, so charts are rendered for, and
// pods checked against the Pod Security Standards of, the cluster under test.
func serverVersion(t *testing.T) (gitVersion string, minor int) {
	t.Helper()
	needControlPlane(t)
	kubeVersionOnce.Do(func() {
		cs, err := kubernetes.NewForConfig(cp.Admin)
		if err != nil {
			kubeVersionErr = err
			return
		}
		info, err := cs.Discovery().ServerVersion()
		if err != nil {
			kubeVersionErr = fmt.Errorf("asking the apiserver its version: %w", err)
			return
		}
		kubeVersion = info.GitVersion
		_, kubeVersionErr = fmt.Sscanf(strings.TrimSuffix(info.Minor, "+"), "%d", &kubeMinor)
	})
	if kubeVersionErr != nil {
		t.Fatal(kubeVersionErr)
	}
	return kubeVersion, kubeMinor
}

// render renders chart for a release and splits it into objects.
func render(t *testing.T, chart string, rel Release) []*unstructured.Unstructured {
	t.Helper()
	objs, err := RenderObjects(chart, rel)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	return OfKind(objs, kind)
}

// deployment is the one Deployment a chart renders, typed.
func deployment(t *testing.T, objs []*unstructured.Unstructured) *appsv1.Deployment {
	t.Helper()
	d, err := DeploymentOf(objs)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// values builds a values tree from dotted paths, as --set does, without
// --set's string parsing: {"reloader.enableHA": true}.
func values(set map[string]any) map[string]any {
	root := map[string]any{}
	for path, v := range set {
		m := root
		keys := strings.Split(path, ".")
		for _, k := range keys[:len(keys)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[keys[len(keys)-1]] = v
	}
	return root
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

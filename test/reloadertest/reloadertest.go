// Package reloadertest is the harness the reloader binary's end-to-end tests
// share: the binary built once per test process, polling until a condition
// holds, and creating objects or failing. Each test package used to carry
// its own copy of these, and the copies had drifted (build flags, poll
// intervals, error text).
package reloadertest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/reloader-dev/reloader/test/tools"
)

// binaries hold one build of ./cmd/reloader per flavour (plain, -race) for
// the life of the test process. They are package state on purpose: "once
// per process" is the point, and sync.OnceValues makes it safe.
var binaries = [3]func() (string, error){
	sync.OnceValues(func() (string, error) { return build("plain", nil) }),
	sync.OnceValues(func() (string, error) { return build("race", nil, "-race") }),
	// Go's CMVP-certified FIPS 140-3 module (the snapshot GOFIPS140=certified
	// names in the toolchain), as the -fips images are built.
	sync.OnceValues(func() (string, error) { return build("fips", []string{"GOFIPS140=certified"}) }),
}

// BuildBinary returns the reloader binary built from this checkout, with the
// race detector when race is true. The first call in a process builds it;
// later calls return the same path. For TestMain, which has no *testing.T.
func BuildBinary(race bool) (string, error) {
	if race {
		return binaries[1]()
	}
	return binaries[0]()
}

// FIPSBinary is the reloader binary built against Go's certified FIPS 140-3
// module: run it with GODEBUG=fips140=only to refuse every non-approved
// algorithm.
func FIPSBinary(t testing.TB) string {
	t.Helper()
	bin, err := binaries[2]()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Binary is BuildBinary failing t on error.
func Binary(t testing.TB, race bool) string {
	t.Helper()
	bin, err := BuildBinary(race)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// build writes the binary to a fresh directory and renames it into a
// stable one (one per checkout and flavour), so test processes running side
// by side never see a half-written file, runs do not pile up binaries, and
// two checkouts never run each other's build.
func build(flavour string, env []string, flags ...string) (string, error) {
	root, err := tools.RepoRoot()
	if err != nil {
		return "", err
	}
	stable := filepath.Join(os.TempDir(), "reloadertest-bin", fmt.Sprintf("%x", sha256.Sum256([]byte(root)))[:16], flavour)
	if err := os.MkdirAll(stable, 0o755); err != nil {
		return "", fmt.Errorf("building the reloader binary: %w", err)
	}
	tmp, err := os.MkdirTemp(stable, "build-")
	if err != nil {
		return "", fmt.Errorf("building the reloader binary: %w", err)
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "reloader")
	if err := tools.GoBuildEnv(context.Background(), env, "./cmd/reloader", out, flags...); err != nil {
		return "", fmt.Errorf("building the reloader binary (%s): %w", flavour, err)
	}
	bin := filepath.Join(stable, "reloader")
	if err := os.Rename(out, bin); err != nil {
		return "", fmt.Errorf("building the reloader binary: %w", err)
	}
	return bin, nil
}

// Eventually polls cond every 50ms until it holds, failing t after timeout
// with the last message cond gave.
func Eventually(t testing.TB, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	EventuallyEvery(t, 50*time.Millisecond, timeout, cond)
}

// EventuallyEvery is Eventually polling every interval.
func EventuallyEvery(t testing.TB, interval, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), interval, timeout, true, func(context.Context) (bool, error) {
		ok, msg := cond()
		last = msg
		return ok, nil
	})
	if err != nil {
		t.Fatalf("condition not met within %s: %s", timeout, last)
	}
}

// MustCreate creates objs in ns, in order, failing t on the first error.
func MustCreate(t testing.TB, cs kubernetes.Interface, ns string, objs ...any) {
	t.Helper()
	ctx := context.Background()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *corev1.ConfigMap:
			_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.Secret:
			_, err = cs.CoreV1().Secrets(ns).Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.Deployment:
			_, err = cs.AppsV1().Deployments(ns).Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.StatefulSet:
			_, err = cs.AppsV1().StatefulSets(ns).Create(ctx, o, metav1.CreateOptions{})
		case *appsv1.DaemonSet:
			_, err = cs.AppsV1().DaemonSets(ns).Create(ctx, o, metav1.CreateOptions{})
		case *batchv1.Job:
			_, err = cs.BatchV1().Jobs(ns).Create(ctx, o, metav1.CreateOptions{})
		case *batchv1.CronJob:
			_, err = cs.BatchV1().CronJobs(ns).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("MustCreate: cannot create %T", o)
		}
		if err != nil {
			t.Fatalf("creating %T in %s: %v", o, ns, err)
		}
	}
}

// EnvFromConfigMap and EnvFromSecret are a container's envFrom of all of a
// ConfigMap's or Secret's keys.
func EnvFromConfigMap(name string) corev1.EnvFromSource {
	return corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
}

func EnvFromSecret(name string) corev1.EnvFromSource {
	return corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}
}

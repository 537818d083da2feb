// Package chartrun runs the controller binary the way a chart's Deployment
// would run it: with the container's rendered arguments and environment,
// authenticated by a kubeconfig (typically the chart's ServiceAccount token),
// on loopback. Tests of the charts and of migration use it to prove that what
// a chart renders is a controller that starts and reloads.
package chartrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/reloader-dev/reloader/test/process"
	"github.com/reloader-dev/reloader/test/reloadertest"
)

// Build compiles the controller from this checkout into dir. The build is
// reloadertest's, done once per process; dir gets a link to it.
func Build(ctx context.Context, dir string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	built, err := reloadertest.BuildBinary(false)
	if err != nil {
		return "", fmt.Errorf("building the controller: %w", err)
	}
	bin := filepath.Join(dir, "reloader")
	if err := os.Symlink(built, bin); err != nil {
		return "", fmt.Errorf("building the controller: %w", err)
	}
	return bin, nil
}

// Options say what to run.
type Options struct {
	// Binary is the controller (see Build).
	Binary string
	// Deployment is the chart's Deployment; its first container's args and
	// env are used.
	Deployment *appsv1.Deployment
	// Kubeconfig authenticates the controller.
	Kubeconfig string
	// PodNamespace and PodName answer the env's metadata.namespace and
	// metadata.name field references.
	PodNamespace, PodName string
	// ExtraArgs are appended (e.g. a short --api-discovery-interval).
	ExtraArgs []string
	// Dir holds the process log.
	Dir string
}

// Controller is a running controller.
type Controller struct {
	*process.Process
	Args []string
	// MetricsURL serves /metrics, /live and /readyz.
	MetricsURL string
}

// Start runs the controller and waits until it is ready (caches synced).
// Environment variables from Secrets or resource limits are left out: the
// process has neither.
func Start(ctx context.Context, o Options) (*Controller, error) {
	if len(o.Deployment.Spec.Template.Spec.Containers) == 0 {
		return nil, fmt.Errorf("deployment %s has no container", o.Deployment.Name)
	}
	ctr := o.Deployment.Spec.Template.Spec.Containers[0]
	args := []string{"--kubeconfig=" + o.Kubeconfig}
	for _, a := range append(append([]string{}, ctr.Command[min(1, len(ctr.Command)):]...), ctr.Args...) {
		if !strings.HasPrefix(a, "--metrics-addr") {
			args = append(args, a)
		}
	}
	port, err := process.FreePort()
	if err != nil {
		return nil, err
	}
	args = append(args, "--metrics-addr=127.0.0.1:"+strconv.Itoa(port))
	args = append(args, o.ExtraArgs...)
	podName := o.PodName
	if podName == "" {
		podName = "reloader-test-pod"
	}
	var env []string
	for _, e := range ctr.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			env = append(env, e.Name+"="+o.PodNamespace)
		case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env = append(env, e.Name+"="+podName)
		}
	}
	p, err := process.Start(process.Options{Name: "reloader", Path: o.Binary, Args: args, Env: env, Dir: o.Dir})
	if err != nil {
		return nil, err
	}
	c := &Controller{Process: p, Args: args, MetricsURL: fmt.Sprintf("http://127.0.0.1:%d", port)}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := p.WaitFor(wctx, 50*time.Millisecond, process.HTTPReady(c.MetricsURL+"/readyz")); err != nil {
		_ = p.Stop(5 * time.Second)
		return nil, fmt.Errorf("controller %v never became ready: %w\n%s", args, err, p.Tail(40))
	}
	return c, nil
}

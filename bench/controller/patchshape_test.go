package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/rollout"
	"github.com/reloader-dev/reloader/controller/workload"
)

// patchShapeBurst is the Deployments patched at once, the burst scenario's
// size.
const patchShapeBurst = 200

// BenchmarkPatchShapes asks whether this controller's reload PATCH costs the
// apiserver more than the floor's: each iteration sends a burst of 200
// concurrent PATCHes of each shape to 200 Deployments of a real apiserver,
// the order of the shapes rotating, and the figures are medians over the
// iterations: the burst's wall time and the control plane's CPU (etcd and
// the apiserver) from its start until 200 ms after its last answer.
//
//   - floor: the floor's own patch (envPatch), the reload variable alone,
//     without a field manager;
//   - controller: written by controller/rollout.Apply, as a reload is: the
//     variable, the applied-hash record, the resourceVersion guard and the
//     field manager.
//
// Run it with a fixed count, as the figures are per burst:
//
//	go test ./bench/controller -run '^$' -bench PatchShapes -benchtime 12x
func BenchmarkPatchShapes(b *testing.B) {
	ctx := context.Background()
	c, err := startCluster(ctx, b.TempDir(), false)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.stop() })
	if _, err := c.driver.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workloadNS}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	for i := range patchShapeBurst {
		if err := c.createDeployment(ctx, deploymentName(i), usesConfigMap(configMapName(i), "value", false)); err != nil {
			b.Fatal(err)
		}
	}
	shapes := []struct {
		name  string
		patch func(ctx context.Context, i int, round string) error
	}{
		{"floor", func(ctx context.Context, i int, round string) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: configMapName(i)}, Data: map[string]string{"value": round}}
			data, err := envPatch(cm)
			if err != nil {
				return err
			}
			_, err = c.driver.AppsV1().Deployments(workloadNS).Patch(ctx, deploymentName(i), types.StrategicMergePatchType, data, metav1.PatchOptions{})
			return err
		}},
		{"controller", nil}, // set below: it needs each Deployment as cached
	}
	var views []workload.View
	shapes[1].patch = func(ctx context.Context, i int, round string) error {
		record, err := json.Marshal(map[string]string{"configmap/" + configMapName(i): round})
		if err != nil {
			return err
		}
		ch := workload.Change{RecordKey: annotations.Applied, Record: string(record),
			Env: []workload.EnvChange{{Container: containerApp, Name: reloadVar(configMapName(i)), Value: round}}}
		return rollout.Apply(ctx, c.driver, views[i], ch, rollout.Options{FieldManager: "reloader"})
	}
	wall := map[string][]float64{}
	cpu := map[string][]float64{}
	pids := c.cp.PIDs()
	b.ResetTimer()
	for n := range b.N {
		for k := range shapes {
			s := shapes[(n+k)%len(shapes)]
			// The controller writes from its cache: the Deployments as they
			// are now, read outside the measurement.
			b.StopTimer()
			if views, err = currentViews(ctx, c); err != nil {
				b.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond) // let the previous burst's work settle
			b.StartTimer()
			cpu0, err := cpuTime(pids...)
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			errs := make([]error, patchShapeBurst)
			var wg sync.WaitGroup
			for i := range patchShapeBurst {
				wg.Go(func() { errs[i] = s.patch(ctx, i, fmt.Sprintf("%s-%d", s.name, n)) })
			}
			wg.Wait()
			took := time.Since(start)
			time.Sleep(200 * time.Millisecond)
			cpu1, err := cpuTime(pids...)
			if err != nil {
				b.Fatal(err)
			}
			for i, err := range errs {
				if err != nil {
					b.Fatalf("%s patch of %s: %v", s.name, deploymentName(i), err)
				}
			}
			wall[s.name] = append(wall[s.name], float64(took.Microseconds())/1000)
			cpu[s.name] = append(cpu[s.name], float64((cpu1 - cpu0).Milliseconds()))
		}
	}
	b.StopTimer()
	for _, s := range shapes {
		b.ReportMetric(spread(wall[s.name]).Median, s.name+"-burst-ms")
		b.ReportMetric(spread(cpu[s.name]).Median, s.name+"-control-plane-cpu-ms")
	}
}

// currentViews lists the burst's Deployments as the controller's cache
// would hold them, in index order.
func currentViews(ctx context.Context, c *cluster) ([]workload.View, error) {
	list, err := c.driver.AppsV1().Deployments(workloadNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the Deployments: %w", err)
	}
	byName := make(map[string]*appsv1.Deployment, len(list.Items))
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	views := make([]workload.View, patchShapeBurst)
	for k := range views {
		d, ok := byName[deploymentName(k)]
		if !ok {
			return nil, fmt.Errorf("Deployment %s not listed", deploymentName(k))
		}
		if views[k], err = workload.ViewOf(d); err != nil {
			return nil, err
		}
	}
	return views, nil
}

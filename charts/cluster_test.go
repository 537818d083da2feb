package charts

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"
)

// monitoringCRDs are minimal stand-ins for the Prometheus Operator's CRDs:
// the kinds and the fields the chart sets, typed, so the apiserver checks that
// what the chart renders has the right shape; anything else is preserved.
var monitoringCRDs = []string{`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: servicemonitors.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: ServiceMonitor, listKind: ServiceMonitorList, plural: servicemonitors, singular: servicemonitor}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [selector, endpoints]
              x-kubernetes-preserve-unknown-fields: true
              properties:
                selector:
                  type: object
                  properties:
                    matchLabels: {type: object, additionalProperties: {type: string}}
                namespaceSelector:
                  type: object
                  properties:
                    matchNames: {type: array, items: {type: string}}
                targetLabels: {type: array, items: {type: string}}
                endpoints:
                  type: array
                  items:
                    type: object
                    x-kubernetes-preserve-unknown-fields: true
                    properties:
                      port: {type: string}
                      path: {type: string}
                      interval: {type: string, pattern: '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$'}
                      honorLabels: {type: boolean}
`, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: podmonitors.monitoring.coreos.com
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: PodMonitor, listKind: PodMonitorList, plural: podmonitors, singular: podmonitor}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              required: [selector]
              x-kubernetes-preserve-unknown-fields: true
              properties:
                selector:
                  type: object
                  properties:
                    matchLabels: {type: object, additionalProperties: {type: string}}
                namespaceSelector:
                  type: object
                  properties:
                    matchNames: {type: array, items: {type: string}}
                podTargetLabels: {type: array, items: {type: string}}
                podMetricsEndpoints:
                  type: array
                  items:
                    type: object
                    x-kubernetes-preserve-unknown-fields: true
                    properties:
                      port: {type: string}
                      path: {type: string}
                      interval: {type: string, pattern: '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$'}
                      honorLabels: {type: boolean}
`}

var (
	monitoringOnce    sync.Once
	monitoringClient  *cluster
	monitoringInstall error
)

// monitoringCluster is a client for the test apiserver once the monitoring
// CRDs are established, its RESTMapper discovering them.
func monitoringCluster(t *testing.T) *cluster {
	t.Helper()
	needControlPlane(t)
	monitoringOnce.Do(func() { monitoringClient, monitoringInstall = installMonitoringCRDs() })
	if monitoringInstall != nil {
		t.Fatal(monitoringInstall)
	}
	return monitoringClient
}

func installMonitoringCRDs() (*cluster, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := newCluster(cp.Admin)
	if err != nil {
		return nil, err
	}
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, doc := range monitoringCRDs {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, fmt.Errorf("parsing a monitoring CRD: %w", err)
		}
		crd := &unstructured.Unstructured{Object: obj}
		if _, err := cl.dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating CRD %s: %w", crd.GetName(), err)
		}
		err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			got, err := cl.dyn.Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return nil, fmt.Errorf("CRD %s never became established: %w", crd.GetName(), err)
		}
	}
	// Discovery lags establishment by a moment; retry until the kinds map.
	var out *cluster
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		c, err := newCluster(cp.Admin)
		if err != nil {
			return false, nil
		}
		for _, kind := range []string{"ServiceMonitor", "PodMonitor"} {
			if _, err := c.mapper.RESTMapping(schema.GroupKind{Group: "monitoring.coreos.com", Kind: kind}, "v1"); err != nil {
				return false, nil
			}
		}
		out = c
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("the monitoring CRDs never appeared in discovery: %w", err)
	}
	return out, nil
}

package cache

import (
	"testing"

	"github.com/reloader-dev/reloader/controller/workload"
)

// A declared kind's API is reported, looked for and named like Argo
// Rollouts': by its resource and the flag that asked for it.
func TestADeclaredKindIsAnOptionalAPIOfItsResource(t *testing.T) {
	d, err := workload.ParseDeclared("apps.kruise.io/v1alpha1/clonesets,kind=CloneSet")
	if err != nil {
		t.Fatal(err)
	}
	api := DeclaredAPI(d)
	if got := api.Resources(); len(got) != 1 || got[0] != d.GVR {
		t.Errorf("Resources() = %v, want %v", got, d.GVR)
	}
	if got := api.Flag(); got != "--workload-kind=apps.kruise.io/v1alpha1/clonesets" {
		t.Errorf("Flag() = %q", got)
	}
	if got := api.ResourceNames(); len(got) != 1 || got[0] != "clonesets.apps.kruise.io/v1alpha1" {
		t.Errorf("ResourceNames() = %v", got)
	}
	if _, declared := ArgoRolloutsAPI.declaredGVR(); declared {
		t.Error("Argo Rollouts' API taken for a declared kind's")
	}
	tab, err := workload.NewTable([]workload.Declared{d})
	if err != nil {
		t.Fatal(err)
	}
	c := &Cache{o: Options{Table: tab}}
	if got, ok := c.workloadAPI("CloneSet"); !ok || got != api {
		t.Errorf("workloadAPI(CloneSet) = %q %v, want %q", got, ok, api)
	}
	if got, ok := c.workloadAPI(workload.Rollout); !ok || got != ArgoRolloutsAPI {
		t.Errorf("workloadAPI(Rollout) = %q %v", got, ok)
	}
	if _, ok := c.workloadAPI(workload.Deployment); ok {
		t.Error("Deployments wait for no API")
	}
}

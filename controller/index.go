package controller

import (
	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// The workload informers' indexes: which workloads a ConfigMap or Secret
// event concerns.
const (
	indexRef    = "reloader/ref"    // "<ns>/<kind>/<name>" of each resource the template uses
	indexNamed  = "reloader/named"  // "<ns>/<kind>" when the workload names resources of kind by pattern
	indexSearch = "reloader/search" // "<ns>" when the workload opted into search/match
)

func (c *Controller) indexRefs(obj any) ([]string, error) {
	v, err := workload.ViewOf(obj)
	if err != nil {
		return nil, nil
	}
	found := refs.Find(&v.Template.Spec)
	out := make([]string, 0, len(found))
	for _, r := range found {
		out = append(out, v.Object.GetNamespace()+"/"+string(r.Kind)+"/"+r.Name)
	}
	return out, nil
}

func (c *Controller) indexNamed(obj any) ([]string, error) {
	v, err := workload.ViewOf(obj)
	if err != nil {
		return nil, nil
	}
	w := annotations.Workload{Meta: v.Object.GetAnnotations(), Template: v.Template.Annotations}
	var out []string
	for _, k := range []refs.Kind{refs.ConfigMap, refs.Secret, refs.SecretProviderClass} {
		if c.o.Names.HasNamedReload(w, k) {
			out = append(out, v.Object.GetNamespace()+"/"+string(k))
		}
	}
	return out, nil
}

func (c *Controller) indexSearch(obj any) ([]string, error) {
	v, err := workload.ViewOf(obj)
	if err != nil {
		return nil, nil
	}
	if c.o.Names.Searches(annotations.Workload{Meta: v.Object.GetAnnotations(), Template: v.Template.Annotations}) {
		return []string{v.Object.GetNamespace()}, nil
	}
	return nil, nil
}

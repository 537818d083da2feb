package cache

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/rollout"
	"github.com/reloader-dev/reloader/controller/workload"
)

// The workload caches' indexes: which workloads a ConfigMap or Secret event
// concerns, and the records of Job reloads.
const (
	indexRef    = "reloader/ref"       // "<ns>/<kind>/<name>" of each resource the template uses
	indexNamed  = "reloader/named"     // "<ns>/<kind>" when the workload names resources of kind by pattern
	indexSearch = "reloader/search"    // "<ns>" when the workload opted into search/match
	indexRecord = "reloader/recreates" // "<ns>/<name>" of the Job a reload record recreates
	indexClass  = "reloader/spc-class" // "<ns>/<class>" of a SecretProviderClassPodStatus
)

// workloadIndexers are the indexes of every workload kind's cache beside
// the namespace index informers come with; the annotation names n decide
// who names or searches.
func workloadIndexers(n annotations.Names, kind workload.Kind) toolscache.Indexers {
	ix := toolscache.Indexers{
		indexRef:    indexRefs,
		indexNamed:  func(obj any) ([]string, error) { return indexNamedBy(n, obj), nil },
		indexSearch: func(obj any) ([]string, error) { return indexSearchBy(n, obj), nil },
	}
	if kind.Has(workload.Recreates) {
		ix[indexRecord] = indexRecords
	}
	return ix
}

func indexRefs(obj any) ([]string, error) {
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

func indexNamedBy(n annotations.Names, obj any) []string {
	v, err := workload.ViewOf(obj)
	if err != nil {
		return nil
	}
	w := annotations.Workload{Meta: v.Object.GetAnnotations(), Template: v.Template.Annotations}
	var out []string
	for _, k := range []refs.Kind{refs.ConfigMap, refs.Secret, refs.SecretProviderClass} {
		if n.HasNamedReload(w, k) {
			out = append(out, v.Object.GetNamespace()+"/"+string(k))
		}
	}
	return out
}

func indexSearchBy(n annotations.Names, obj any) []string {
	v, err := workload.ViewOf(obj)
	if err != nil {
		return nil
	}
	if n.Searches(annotations.Workload{Meta: v.Object.GetAnnotations(), Template: v.Template.Annotations}) {
		return []string{v.Object.GetNamespace()}
	}
	return nil
}

// indexRecords finds the records of Job reloads (see rollout.RecordOf) by
// the Job they recreate.
func indexRecords(obj any) ([]string, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, nil
	}
	if name, ok := rollout.IsRecord(m); ok {
		return []string{m.GetNamespace() + "/" + name}, nil
	}
	return nil, nil
}

func indexClasses(obj any) ([]string, error) {
	if s, ok := obj.(*spcStatus); ok && s.Class != "" {
		return []string{s.Namespace + "/" + s.Class}, nil
	}
	return nil, nil
}

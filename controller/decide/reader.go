package decide

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/reloader-dev/reloader/controller/hash"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Reader is what Decide may know of the cluster beyond the workload: what
// the controller's watches hold. The controller implements it over its
// informer caches; Inspect over a map of objects it was given.
type Reader interface {
	// Resource is the state of one ConfigMap, Secret or SecretProviderClass.
	Resource(kind refs.Kind, namespace, name string) State
	// Names lists the resources of kind in namespace.
	Names(kind refs.Kind, namespace string) []string
	// Birth is the workload's creation as the watch delivered it; false
	// when it was found in the initial list (see firstsight.go).
	Birth(key workload.Key) (Birth, bool)
	// NamespaceLabels are the labels of a namespace, for the namespace
	// selector; false when it is not known.
	NamespaceLabels(namespace string) (map[string]string, bool)
}

// State is what the caches keep of a resource: never its data, only its hash.
type State struct {
	// Annotations are the ones that steer reloads (ignore, match).
	Annotations map[string]string
	// Hash of the content; Exists is false when the resource is absent (for
	// a SecretProviderClass: no mount reports its content yet).
	Hash   string
	Exists bool
	// Keys are the per-key digests of a ConfigMap's or Secret's content,
	// for per-key reloads (keys.go).
	Keys hash.Keys
	// ResourceVersion, Created and Written (its last write, from
	// managedFields) place a ConfigMap's or Secret's content in time
	// (firstsight.go).
	ResourceVersion  string
	Created, Written time.Time
}

// Birth identifies a workload's first version, as its creation event
// carried it.
type Birth struct {
	UID             types.UID
	ResourceVersion string
}

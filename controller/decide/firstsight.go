package decide

import (
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/reloader-dev/reloader/controller/refs"
)

// A workload the controller meets for the first time has no applied-hashes
// record, so the controller cannot know which content its pods were made
// with. Taking the current content as that baseline loses any change made
// between the workload's creation and the controller's first look at it (a
// pipeline that creates a Job and updates its Secret 10 ms later). The rule
// here closes that window without rolling workloads merely adopted:
//
// A resource's current content counts as a change, not as the baseline, when
// its last write is later than the workload's creation:
//   - the resource's resourceVersion is greater than that of the workload's
//     creation (both are written to one etcd, which orders them); or
//   - the resource's last write (the newest managedFields time, else its
//     creationTimestamp) is in a later second than the workload's
//     creationTimestamp.
//
// The workload's creation resourceVersion is known only when this
// controller's watch delivered the creation itself (Reader.Birth, recorded by
// the workload handler); workloads found in the initial list (the controller
// started after them, or they existed before it was installed) are adopted
// with their current state as the baseline, as before. So the rule applies
// exactly to the window between a workload's creation and the first sync of
// a running controller; a workload annotated long after its creation is
// adopted, not rolled. A sync therefore waits for the workload handler's Add:
// the informer indexes an object before that handler runs, so another event
// (its ConfigMap changing a millisecond later) can enqueue the workload while
// its birth is not yet known.
//
// Limits: times have one-second resolution and come from the apiservers'
// clocks, and a managedFields time is not bumped by every write; resourceVersions
// are compared across resources (a ConfigMap's with a Deployment's), which is
// only meaningful while both are stored in one etcd (no
// --etcd-servers-overrides splitting them). Any write after the
// creation counts, including one that changed only labels. A resource both
// created and written within the workload's creation second is taken as
// having existed before it (a change, not a creation).

// sinceCreation reports whether the resource in wt was written after the
// workload was created (see the rule above), and whether it was also
// created after it.
func (d *decider) sinceCreation(wt Watched) (written, created bool) {
	b, ok := d.r.Birth(d.v.Key())
	if !ok || b.UID != d.v.Object.GetUID() {
		return false, false
	}
	wc := d.v.Object.GetCreationTimestamp().Unix()
	// The resourceVersion order decides whenever it can be read: the
	// managedFields time is not a reliable last-write time (a manager that
	// changes a value it already owns may keep its entry's time), so a change
	// made just after a second boundary can carry an earlier second than the
	// workload's creation. The time still counts a write in a later second.
	n, err := resourceversion.CompareResourceVersion(wt.ResourceVersion, b.ResourceVersion)
	written = wt.Written.Unix() > wc || err == nil && n > 0
	return written, written && wt.Created.Unix() > wc
}

// firstSight judges a resource the workload's record does not mention and no
// reload marker explains. It returns the hash to take as previously applied
// ("" when the resource is to be treated as created) and ok; ok is false when
// the current content is the baseline.
func (d *decider) firstSight(res Resource, wt Watched, hadRecord bool, record map[string]string) (prev string, ok bool) {
	if wt.Hash == "" || res.Kind == refs.SecretProviderClass {
		return "", false
	}
	if hadRecord {
		// A record lists every existing resource its reload list matched,
		// under the list it holds (wildcardKey): a match missing from it did
		// not exist when it was written, so it has been created since.
		list, named := d.o.Names.ReloadList(d.w, res.Kind)
		if wt.Named && named {
			if recorded, ok := record[wildcardKey(res.Kind)]; ok && recorded == list {
				return "", true
			}
		}
		return "", false
	}
	written, created := d.sinceCreation(wt)
	switch {
	case created:
		return "", true
	case written:
		return changedSinceCreation, true
	}
	return "", false
}

// changedSinceCreation stands for "some content other than the current" in
// the comparison with the record; it is never written anywhere.
const changedSinceCreation = "(changed since the workload was created)"

// wildcardKey is the record entry that holds the reload list of kind the
// record was computed under ("configmap/*"). No resource name contains "*".
func wildcardKey(k refs.Kind) string { return string(k) + "/*" }

// Reasons a change is deliberately not applied (reloader_skipped_total).
const (
	SkipCreateOff  = "reload_on_create_disabled"
	SkipDeleteOff  = "reload_on_delete_disabled"
	SkipAdopted    = "adopted_baseline"
	SkipNotNamed   = "not_named"
	SkipNoVariable = "no_variable_to_remove"
)

var skipText = map[string]string{
	SkipCreateOff:  "the resource was created but --reload-on-create is off",
	SkipDeleteOff:  "the resource was deleted but --reload-on-delete is off",
	SkipAdopted:    "first sight of this resource for the workload: its current content is taken as the one applied",
	SkipNotNamed:   "the workload uses the resource but its annotations do not select it",
	SkipNoVariable: "the resource was deleted but the workload carries no reload variable for it (env-vars strategy)",
}

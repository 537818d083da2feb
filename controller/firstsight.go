package controller

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
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
// controller's watch delivered the creation itself (birth, recorded by the
// workload handler); workloads found in the initial list (the controller
// started after them, or they existed before it was installed) are adopted
// with their current state as the baseline, as before. So the rule applies
// exactly to the window between a workload's creation and the first sync of
// a running controller; a workload annotated long after its creation is
// adopted, not rolled. A sync therefore waits for the workload handler's Add
// (handlerDelivered): the informer indexes an object before that handler
// runs, so another event (its ConfigMap changing a millisecond later) can
// enqueue the workload while its birth is not yet known.
//
// Limits: times have one-second resolution and come from the apiservers'
// clocks, and a managedFields time is not bumped by every write; resourceVersions
// are compared across resources (a ConfigMap's with a Deployment's), which is
// only meaningful while both are stored in one etcd (no
// --etcd-servers-overrides splitting them). Any write after the
// creation counts, including one that changed only labels. A resource both
// created and written within the workload's creation second is taken as
// having existed before it (a change, not a creation).
type birth struct {
	uid             types.UID
	resourceVersion string
}

// lastWrite is when an object was last written, as far as its metadata
// tells: the newest managedFields entry, or its creation.
func lastWrite(m metav1.Object) time.Time {
	t := m.GetCreationTimestamp().Time
	for _, f := range m.GetManagedFields() {
		if f.Time != nil && f.Time.After(t) {
			t = f.Time.Time
		}
	}
	return t
}

// sinceCreation reports whether the resource in wt was written after the
// workload v was created (see the rule above), and whether it was also
// created after it.
func (c *Controller) sinceCreation(v workload.View, wt watched) (written, created bool) {
	b := c.keys.read(v.Key()).born
	if b == nil || b.uid != v.Object.GetUID() {
		return false, false
	}
	wc := v.Object.GetCreationTimestamp().Unix()
	// The resourceVersion order decides whenever it can be read: the
	// managedFields time is not a reliable last-write time (a manager that
	// changes a value it already owns may keep its entry's time), so a change
	// made just after a second boundary can carry an earlier second than the
	// workload's creation. The time still counts a write in a later second.
	n, err := resourceversion.CompareResourceVersion(wt.resourceVersion, b.resourceVersion)
	written = wt.written.Unix() > wc || err == nil && n > 0
	return written, written && wt.created.Unix() > wc
}

// firstSight judges a resource the workload's record does not mention and no
// reload marker explains. It returns the hash to take as previously applied
// ("" when the resource is to be treated as created) and ok; ok is false when
// the current content is the baseline.
func (c *Controller) firstSight(v workload.View, res resource, wt watched, hadRecord bool, record map[string]string, w annotations.Workload) (prev string, ok bool) {
	if wt.hash == "" || res.Kind == refs.SecretProviderClass {
		return "", false
	}
	if hadRecord {
		// A record lists every existing resource its reload list matched,
		// under the list it holds (wildcardKey): a match missing from it did
		// not exist when it was written, so it has been created since.
		list, named := c.o.Names.ReloadList(w, res.Kind)
		if wt.named && named {
			if recorded, ok := record[wildcardKey(res.Kind)]; ok && recorded == list {
				return "", true
			}
		}
		return "", false
	}
	written, created := c.sinceCreation(v, wt)
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
	skipCreateOff  = "reload_on_create_disabled"
	skipDeleteOff  = "reload_on_delete_disabled"
	skipAdopted    = "adopted_baseline"
	skipNotNamed   = "not_named"
	skipNoVariable = "no_variable_to_remove"
)

var skipText = map[string]string{
	skipCreateOff:  "the resource was created but --reload-on-create is off",
	skipDeleteOff:  "the resource was deleted but --reload-on-delete is off",
	skipAdopted:    "first sight of this resource for the workload: its current content is taken as the one applied",
	skipNotNamed:   "the workload uses the resource but its annotations do not select it",
	skipNoVariable: "the resource was deleted but the workload carries no reload variable for it (env-vars strategy)",
}

// skip is a change deliberately not applied.
type skip struct {
	res    resource
	reason string
}

// reportSkips logs and counts changes deliberately not applied, once the
// sync that decided them has been written (a retried sync does not count
// them twice).
func (c *Controller) reportSkips(v workload.View, skips []skip) {
	for _, s := range skips {
		c.o.Metrics.SkippedTotal.WithLabelValues(s.reason).Inc()
		c.o.Logger.Info("change not applied", "workload", v.Key().String(), "resource", kindTitle(s.res.Kind)+" "+s.res.Name,
			"reason", s.reason, "detail", skipText[s.reason])
	}
}

// reportUnnamed logs and counts, for a ConfigMap or Secret that was created,
// changed or deleted, every workload that uses it in its pod spec and opted
// into reloading, but whose annotations do not select it (typed auto of the
// other kind, exclude list, search without match, ignore on the resource).
// It only reads the index; nothing is enqueued for it.
func (c *Controller) reportUnnamed(kind refs.Kind, m metav1.Object, what string) {
	ns, name := m.GetNamespace(), m.GetName()
	if c.ignoredNamespace(ns) {
		return
	}
	s := c.scopeFor(ns)
	if s == nil {
		return
	}
	for _, inf := range s.workloads {
		objs, err := inf.GetIndexer().ByIndex(indexRef, ns+"/"+string(kind)+"/"+name)
		if err != nil {
			continue
		}
		for _, o := range objs {
			v, err := workload.ViewOf(o)
			if err != nil {
				continue
			}
			w := annotations.Workload{Meta: v.Object.GetAnnotations(), Template: v.Template.Annotations}
			if !c.o.Names.Interested(w, c.o.AutoReloadAll) {
				continue
			}
			d := c.o.Names.Decide(w, annotations.Resource{Kind: kind, Name: name, Annotations: m.GetAnnotations()}, c.o.AutoReloadAll)
			if d.Reload {
				continue
			}
			c.o.Metrics.SkippedTotal.WithLabelValues(skipNotNamed).Inc()
			c.o.Logger.Info("change not applied", "workload", v.Key().String(), "resource", kindTitle(kind)+" "+name,
				"event", what, "reason", skipNotNamed, "detail", skipText[skipNotNamed])
		}
	}
}

// handlerDelivered reports whether the workload handler has run the Add of
// the incarnation v (same UID) the index holds.
func (c *Controller) handlerDelivered(key workload.Key, v workload.View) bool {
	uid := c.keys.read(key).delivered
	return uid != "" && uid == v.Object.GetUID()
}

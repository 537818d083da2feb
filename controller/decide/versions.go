package decide

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Monotonic records: a reload is never older than one already applied,
// whoever writes it.
//
// The applied-hashes record says what content was applied, not how current
// the view was that decided it. Two writers (a leader paused past its lease
// and thawed, the old and new pod of the controller's own rolling upgrade)
// can each decide from their own caches; the one whose watch of a ConfigMap
// lags sees the workload's newer record beside the older ConfigMap and would
// "reload" the workload back to content that was already replaced. The
// workload's resourceVersion guard does not stop that: the lagging writer
// reads the workload fresh.
//
// So every entry of the record also carries, in annotations.AppliedVersions,
// the resourceVersion of the ConfigMap or Secret the writer saw when it wrote
// that entry, bound to the entry's hash. A decision whose view of any watched
// resource is older than the version recorded for it is stale: it writes
// nothing and is made again when the cache catches up (the newer version's
// watch event enqueues the workload anyway).
//
// "Older" is the apiserver's order: resourceVersions of one resource are
// etcd revisions, comparable as integers (resourceversion.CompareResourceVersion,
// KEP-5504). Every write, deletions included, takes a new, higher revision, so
// a ConfigMap deleted and recreated has a version above every version of the
// one it replaced: a record made from the old object never holds back the new
// one, and a view that still holds the old object is older than a record of
// the new. A deletion is recorded with the last version seen to exist ("gone
// after it"): a view that still holds that version or an older one is stale.
// What it cannot order, it does not judge: a version that is not a well-formed
// integer (an aggregated or restored apiserver), an entry whose hash another
// writer changed without its version (a controller older than this record, or
// a person), and a view that sees a resource absent (the cache keeps no
// version of a deletion) leave the decision as it was before versions.

const maxVersionsBytes = 256 << 10

// versionBindLen is how much of an entry's hash its version entry carries: an
// entry whose hash was replaced without its version no longer matches and is
// not used.
const versionBindLen = 12

// StaleView is a watched resource the decision's view holds at an older
// version than the one the workload's record says was applied.
type StaleView struct {
	Resource
	// Seen is the version the view holds; Applied the recorded one.
	Seen, Applied string
}

func (s StaleView) String() string {
	return fmt.Sprintf("%s at version %s, older than version %s already applied", s.Resource, s.Seen, s.Applied)
}

// appliedVersions reads the versions entries on v that still belong to the
// record's hashes: entry -> resourceVersion. An unreadable annotation is a
// problem to report and counts as none (the decision then judges as before
// versions existed).
func appliedVersions(v workload.View, record map[string]string) (map[string]string, []string) {
	text, had := v.Object.GetAnnotations()[annotations.AppliedVersions]
	if !had {
		return map[string]string{}, nil
	}
	raw, err := parseVersions(text)
	if err != nil {
		return map[string]string{}, []string{fmt.Sprintf("annotation %s is unreadable (%v); judging without it", annotations.AppliedVersions, err)}
	}
	out := make(map[string]string, len(raw))
	for entry, val := range raw {
		rv, bound, ok := strings.Cut(val, "/")
		h, recorded := record[entry]
		if !ok || !recorded || bound != bindOf(h) || rv == "" {
			continue
		}
		out[entry] = rv
	}
	return out, nil
}

// parseVersions reads the versions annotation ("" is empty); anyone who can
// edit the workload can write it, so it is bounded.
func parseVersions(s string) (map[string]string, error) {
	m := map[string]string{}
	if s == "" {
		return m, nil
	}
	if len(s) > maxVersionsBytes {
		return m, errors.New("too large")
	}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return map[string]string{}, err
	}
	return m, nil
}

func bindOf(hash string) string {
	if len(hash) > versionBindLen {
		return hash[:versionBindLen]
	}
	return hash
}

// older reports whether version seen is strictly before applied; false when
// either cannot be ordered.
func older(seen, applied string) bool {
	c, err := resourceversion.CompareResourceVersion(seen, applied)
	return err == nil && c < 0
}

// staleViews lists the watched resources the view holds at a version older
// than the one applied (sorted). A recorded deletion ("" hash) was applied
// after the version recorded with it, so holding that very version is stale
// too.
func staleViews(set map[Resource]Watched, record, versions map[string]string) []StaleView {
	var out []StaleView
	for res, wt := range set {
		applied, ok := versions[res.String()]
		if !ok || wt.ResourceVersion == "" {
			continue
		}
		deleted := record[res.String()] == ""
		if older(wt.ResourceVersion, applied) || deleted && wt.ResourceVersion == applied {
			out = append(out, StaleView{Resource: res, Seen: wt.ResourceVersion, Applied: applied})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// nextVersions is the versions annotation written with next, the record the
// decision writes: each entry gets the version its hash was read from. An
// entry the view sees absent keeps the version recorded with it, which for a
// resource just deleted is the last version seen to exist.
func nextVersions(next map[string]string, set map[Resource]Watched, versions map[string]string) string {
	out := map[string]string{}
	for res, wt := range set {
		entry := res.String()
		h, ok := next[entry]
		if !ok {
			continue
		}
		rv := wt.ResourceVersion
		if wt.Hash == "" || rv == "" {
			rv = versions[entry]
		}
		if rv != "" {
			out[entry] = rv + "/" + bindOf(h)
		}
	}
	return encodeRecord(out)
}

package controller

import (
	"sort"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// baseline is what is known of the content last applied to a workload for
// one watched resource, and where it was learnt.
type baseline struct {
	hash  string
	known bool
	from  baselineSource
}

type baselineSource int

const (
	fromNothing    baselineSource = iota
	fromRecord                    // the applied-hashes record
	fromMarker                    // a reload marker in the template (evidence)
	fromFirstSight                // the first-sight rule (firstsight.go)
)

// planInput is everything planChange needs, gathered from the caches and the
// workload beforehand, so the decision itself reads nothing.
type planInput struct {
	set       map[resource]watched
	baselines map[resource]baseline
	// lists holds the wildcard record entries ("configmap/*") and the reload
	// list each held when computed (wildcardKey).
	lists          map[string]string
	reloadOnCreate bool
	reloadOnDelete bool
}

// plan is what one sync decides: the reloads to apply (sorted), the changes
// deliberately not applied, and the record to write.
type plan struct {
	reloads []reload
	skips   []skip
	next    map[string]string
}

// gatherPlanInput reads what planChange decides on: for every watched
// resource the content last applied, from the record, else a reload marker,
// else the first-sight rule.
func (c *Controller) gatherPlanInput(v workload.View, w annotations.Workload, set map[resource]watched, record map[string]string, hadRecord bool) planInput {
	in := planInput{set: set, baselines: make(map[resource]baseline, len(set)), lists: map[string]string{},
		reloadOnCreate: c.o.ReloadOnCreate, reloadOnDelete: c.o.ReloadOnDelete}
	for _, k := range []refs.Kind{refs.ConfigMap, refs.Secret} {
		if list, ok := c.o.Names.ReloadList(w, k); ok && !c.kindIgnored(k) {
			in.lists[wildcardKey(k)] = list
		}
	}
	for res, wt := range set {
		if h, ok := record[res.String()]; ok {
			in.baselines[res] = baseline{h, true, fromRecord}
			continue
		}
		// First sight of this resource for this workload. A reload marker
		// left in the template (ours or the original's) tells what was
		// applied; without one, firstSight decides whether the current
		// content is a change or the baseline.
		if h, ok := c.evidence(v, res); ok {
			in.baselines[res] = baseline{h, true, fromMarker}
			continue
		}
		if h, ok := c.firstSight(v, res, wt, hadRecord, record, w); ok {
			in.baselines[res] = baseline{h, true, fromFirstSight}
			continue
		}
		in.baselines[res] = baseline{}
	}
	return in
}

// planChange compares the watched set with what was last applied and decides
// which resources changed, appeared or disappeared, under --reload-on-create
// and --reload-on-delete. It is pure: sync and Inspect (reloader explain)
// both call it, so the two cannot disagree.
func planChange(in planInput) plan {
	p := plan{next: make(map[string]string, len(in.set)+len(in.lists))}
	for k, list := range in.lists {
		p.next[k] = list
	}
	for res, wt := range in.set {
		// The record holds "" for a resource the pod spec uses that does not
		// exist; one only named by the reload list and missing is covered by
		// the wildcard entry, so names that come and go do not pile up.
		if !wt.named || wt.hash != "" {
			p.next[res.String()] = wt.hash
		}
		b := in.baselines[res]
		if !b.known {
			if wt.hash != "" {
				p.skips = append(p.skips, skip{res, skipAdopted})
			}
			continue
		}
		switch prev := b.hash; {
		case prev == wt.hash:
		case prev == "":
			// A SecretProviderClass "appears" when its first pod mounts it:
			// that is the workload starting, not a change to roll for.
			switch {
			case res.Kind == refs.SecretProviderClass:
			case in.reloadOnCreate:
				p.reloads = append(p.reloads, reload{res, wt, created})
			default:
				p.skips = append(p.skips, skip{res, skipCreateOff})
			}
		case wt.hash == "":
			if in.reloadOnDelete {
				p.reloads = append(p.reloads, reload{res, wt, deleted})
			} else {
				p.skips = append(p.skips, skip{res, skipDeleteOff})
			}
		default:
			p.reloads = append(p.reloads, reload{res, wt, changed})
		}
	}
	// Map order is random; the plan is not.
	sort.Slice(p.reloads, func(i, j int) bool { return p.reloads[i].res.String() < p.reloads[j].res.String() })
	sort.Slice(p.skips, func(i, j int) bool {
		a, b := p.skips[i], p.skips[j]
		return a.res.String() < b.res.String() || a.res == b.res && a.reason < b.reason
	})
	return p
}

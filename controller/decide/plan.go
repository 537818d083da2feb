package decide

import (
	"sort"

	"github.com/reloader-dev/reloader/controller/refs"
)

// planInput is everything planChange needs, gathered from the Reader and the
// workload beforehand, so the comparison itself reads nothing.
type planInput struct {
	set       map[Resource]Watched
	baselines map[Resource]Baseline
	// lists holds the wildcard record entries ("configmap/*") and the reload
	// list each held when computed (wildcardKey).
	lists          map[string]string
	reloadOnCreate bool
	reloadOnDelete bool
}

// plan is the comparison's outcome: the reloads to apply (sorted), the
// changes deliberately not applied, and the record to write.
type plan struct {
	reloads []Reload
	skips   []Skip
	next    map[string]string
}

// gatherPlanInput reads what planChange decides on: for every watched
// resource the content last applied, from the record, else a reload marker,
// else the first-sight rule.
func (d *decider) gatherPlanInput(set map[Resource]Watched, record map[string]string, hadRecord bool) planInput {
	in := planInput{set: set, baselines: make(map[Resource]Baseline, len(set)), lists: map[string]string{},
		reloadOnCreate: d.o.ReloadOnCreate, reloadOnDelete: d.o.ReloadOnDelete}
	for _, k := range []refs.Kind{refs.ConfigMap, refs.Secret} {
		if list, ok := d.o.Names.ReloadList(d.w, k); ok && !d.o.KindIgnored(k) {
			in.lists[wildcardKey(k)] = list
		}
	}
	for res, wt := range set {
		if h, ok := record[res.String()]; ok {
			in.baselines[res] = Baseline{h, true, FromRecord}
			continue
		}
		// First sight of this resource for this workload. A reload marker
		// left in the template (ours or the original's) tells what was
		// applied; without one, firstSight decides whether the current
		// content is a change or the baseline.
		if h, ok := d.evidence(res); ok {
			in.baselines[res] = Baseline{h, true, FromMarker}
			continue
		}
		if h, ok := d.firstSight(res, wt, hadRecord, record); ok {
			in.baselines[res] = Baseline{h, true, FromFirstSight}
			continue
		}
		in.baselines[res] = Baseline{}
	}
	return in
}

// planChange compares the watched set with what was last applied and decides
// which resources changed, appeared or disappeared, under --reload-on-create
// and --reload-on-delete.
func planChange(in planInput) plan {
	p := plan{next: make(map[string]string, len(in.set)+len(in.lists))}
	for k, list := range in.lists {
		p.next[k] = list
	}
	for res, wt := range in.set {
		wt.Resource = res
		// The record holds "" for a resource the pod spec uses that does not
		// exist; one only named by the reload list and missing is covered by
		// the wildcard entry, so names that come and go do not pile up.
		if !wt.Named || wt.Hash != "" {
			p.next[res.String()] = wt.Hash
		}
		b := in.baselines[res]
		// A reload carries what it replaces (the audit trail's old hash).
		wt.Baseline = b
		if !b.Known {
			if wt.Hash != "" {
				p.skips = append(p.skips, Skip{res, SkipAdopted})
			}
			continue
		}
		switch prev := b.Hash; {
		case prev == wt.Hash:
		case wt.AltHash != "" && prev == wt.AltHash, wt.UnkeyedHash != "" && prev == wt.UnkeyedHash:
			// Applied under the other per-key mode, or under unkeyed
			// digests, and unchanged since (keys.go): adopted, the record
			// takes the new formula's hash.
		case prev == "":
			// A SecretProviderClass "appears" when its first pod mounts it:
			// that is the workload starting, not a change to roll for.
			switch {
			case res.Kind == refs.SecretProviderClass:
			case in.reloadOnCreate:
				p.reloads = append(p.reloads, Reload{wt, Created})
			default:
				p.skips = append(p.skips, Skip{res, SkipCreateOff})
			}
		case wt.Hash == "":
			if in.reloadOnDelete {
				p.reloads = append(p.reloads, Reload{wt, Deleted})
			} else {
				p.skips = append(p.skips, Skip{res, SkipDeleteOff})
			}
		default:
			p.reloads = append(p.reloads, Reload{wt, Changed})
		}
	}
	// Map order is random; the plan is not.
	sort.Slice(p.reloads, func(i, j int) bool { return p.reloads[i].String() < p.reloads[j].String() })
	sort.Slice(p.skips, func(i, j int) bool {
		a, b := p.skips[i], p.skips[j]
		return a.String() < b.String() || a.Resource == b.Resource && a.Reason < b.Reason
	})
	return p
}

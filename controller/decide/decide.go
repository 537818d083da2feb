package decide

import (
	"sort"
	"time"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// decider is one decision in progress: its inputs, read by the rules.
type decider struct {
	o   Options
	v   workload.View
	w   annotations.Workload
	r   Reader
	now time.Time
	// verdicts are filled by watchedSet as the rules fire.
	verdicts map[Resource]Verdict
	// keys are the per-key rules, read by watchedSet (keys.go).
	keys keyRules
}

// Decide says what a sync of v would do at now, reading only r: whether it
// stops at a gate, the pause to wait for or end, the resources watched and
// the baseline of each, the reloads and skips, the record to write, the hold
// of storm control and the one change carrying the reloads. It decides past a
// gate too, so `reloader explain` can show what the workload would get; a
// sync stops there. o is taken with its defaults (WithDefaults).
func Decide(o Options, v workload.View, r Reader, now time.Time) Decision {
	d := &decider{o: o.WithDefaults(), v: v, r: r, now: now,
		w:        annotations.Workload{Meta: v.Object.GetAnnotations(), Template: v.Template.Annotations},
		verdicts: map[Resource]Verdict{}}
	var out Decision
	out.Interested = d.o.Names.Interested(d.w, d.o.AutoReloadAll)
	ns := v.Object.GetNamespace()
	switch ok, reason := v.Reloadable(); {
	case !ok:
		out.Gate, out.Skip = GateWorkload, reason
	case d.o.NamespaceIgnored(ns) || !d.o.namespaceSelected(r, ns):
		out.Gate = GateNamespace
	case !out.Interested:
		out.Gate = GateNotInterested
	}
	out.PausedFor, out.Resume = d.pause()
	if out.PauseWatch = d.pauseWatch(); out.PauseWatch != nil && out.PauseWatch.Ours && out.PauseWatch.Outlived {
		out.Resume = d.resumeChange()
	}
	out.Marker = d.marker()
	out.ReadOn = map[refs.Kind]string{}
	for _, k := range refs.Kinds() {
		out.ReadOn[k] = d.o.Names.ReadOn(d.w, k)
	}

	record, recordText, hadRecord, problems := appliedRecord(v)
	out.Record, out.RecordText, out.HasRecord = record, recordText, hadRecord
	set, found := d.watchedSet(record)
	versions, unreadable := appliedVersions(v, record)
	out.Problems = append(append(problems, found...), unreadable...)

	in := d.gatherPlanInput(set, record, hadRecord)
	for res, wt := range set {
		wt.Baseline = in.baselines[res]
		out.Watched = append(out.Watched, wt)
	}
	sort.Slice(out.Watched, func(i, j int) bool { return out.Watched[i].String() < out.Watched[j].String() })
	for _, vd := range d.verdicts {
		out.Verdicts = append(out.Verdicts, vd)
	}
	sort.Slice(out.Verdicts, func(i, j int) bool { return out.Verdicts[i].String() < out.Verdicts[j].String() })
	pl := planChange(in)
	out.Reloads, out.Skips = pl.reloads, pl.skips
	out.NextRecord = encodeRecord(pl.next)
	out.NextVersions = nextVersions(pl.next, set, versions)
	out.Stale = staleViews(set, record, versions)
	win, winFrom, winErr := d.window()
	if winErr != nil {
		out.Problems = append(out.Problems, winErr.Error())
	}
	d.approval(&out)
	if len(out.Stale) > 0 {
		// An older view than the one applied writes nothing (versions.go);
		// the reloads stay listed for explain, as what this view would do.
		return out
	}
	if len(out.Reloads) == 0 {
		out.RecordOnly = !hadRecord || out.NextRecord != recordText
		return out
	}
	out.HeldFor = max(d.tooSoon(), 0)
	d.holdForWindow(&out, win, winFrom, winErr)
	c := d.buildChange(out.Reloads, out.Skips, out.RecordChange())
	out.Change, out.Applied, out.Skips, out.NoContainer = c.change, c.applied, c.skips, c.noContainer
	return out
}

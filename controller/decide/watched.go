package decide

import (
	"fmt"
	"strings"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

func watchedFrom(res Resource, st State) Watched {
	return Watched{Resource: res, Hash: st.Hash, ResourceVersion: st.ResourceVersion, Created: st.Created, Written: st.Written}
}

// problems collects problem texts once each, in the order found.
type problems struct {
	list []string
	seen map[string]bool
}

func (p *problems) add(s string) {
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if !p.seen[s] {
		p.seen[s] = true
		p.list = append(p.list, s)
	}
}

func (p *problems) addErrs(errs []error) {
	for _, e := range errs {
		p.add(e.Error())
	}
}

// watchedSet lists the resources the workload watches, with their current
// hashes, and the problems worth telling the user about.
func (d *decider) watchedSet(record map[string]string) (map[Resource]Watched, []string) {
	set := map[Resource]Watched{}
	var ps problems
	d.keys = d.readKeyRules(&ps)
	d.usedResources(set, &ps)
	for _, k := range []refs.Kind{refs.ConfigMap, refs.Secret, refs.SecretProviderClass} {
		if d.o.KindIgnored(k) || !d.o.Names.HasNamedReload(d.w, k) {
			continue
		}
		d.namedResources(k, set, &ps)
		if k != refs.SecretProviderClass {
			d.deletedResources(k, record, set)
		}
	}
	if s, ok := d.v.Object.GetAnnotations()[d.o.Names.PausePeriod]; ok && d.v.Kind.Has(workload.Pausable) {
		if _, err := parsePausePeriod(s); err != nil {
			ps.list = append(ps.list, fmt.Sprintf("annotation %s: %v", d.o.Names.PausePeriod, err))
		}
	}
	if s, ok := d.v.Object.GetAnnotations()[d.o.Names.RolloutStrategy]; ok && s != "rollout" && s != "restart" {
		ps.list = append(ps.list, fmt.Sprintf("annotation %s=%q: want \"rollout\" or \"restart\"", d.o.Names.RolloutStrategy, s))
	}
	return set, ps.list
}

// usedResources adds the resources the pod spec uses that the annotations
// select.
func (d *decider) usedResources(set map[Resource]Watched, ps *problems) {
	ns := d.v.Object.GetNamespace()
	for _, r := range refs.Find(&d.v.Template.Spec) {
		res := Resource{r.Kind, r.Name}
		if d.o.KindIgnored(r.Kind) {
			d.verdicts[res] = Verdict{Resource: res, Rule: RuleKindIgnored, Detail: kindIgnoredDetail(r.Kind)}
			continue
		}
		st := d.r.Resource(r.Kind, ns, r.Name)
		ann := st.Annotations
		if !st.Exists && r.Kind != refs.SecretProviderClass {
			// A missing resource carries no annotations. Decide as if it
			// carried match, so a search workload watches it too: its
			// creation and deletion are then changes like any other, and once
			// it exists its real annotations decide.
			ann = map[string]string{d.o.Names.Match: "true"}
		}
		a := d.o.Names.Decide(d.w, annotations.Resource{Kind: r.Kind, Name: r.Name, Annotations: ann}, d.o.AutoReloadAll)
		ps.addErrs(a.Errors)
		d.verdicts[res] = d.verdictOf(res, a, !st.Exists)
		if !a.Reload {
			continue
		}
		wt := watchedFrom(res, st)
		wt.Auto, wt.Optional = a.Auto, r.Optional
		d.keys.watchedKeys(&wt, st)
		if !st.Exists {
			wt.Hash = ""
			if !r.Optional && !d.o.Filtered && r.Kind != refs.SecretProviderClass {
				// A SecretProviderClass has no status until a pod mounts it.
				ps.list = append(ps.list, fmt.Sprintf("uses %s %q, which does not exist", r.Kind.Title(), r.Name))
			}
		}
		set[res] = wt
	}
}

// namedResources adds the resources of kind k, used or not, that the reload
// list names.
func (d *decider) namedResources(k refs.Kind, set map[Resource]Watched, ps *problems) {
	ns := d.v.Object.GetNamespace()
	for _, name := range d.r.Names(k, ns) {
		res := Resource{k, name}
		if _, done := set[res]; done {
			continue
		}
		st := d.r.Resource(k, ns, name)
		a := d.o.Names.Decide(d.w, annotations.Resource{Kind: k, Name: name, Annotations: st.Annotations}, d.o.AutoReloadAll)
		ps.addErrs(a.Errors)
		// An unused resource can only be watched by name: auto and search
		// need a container that uses it.
		if a.Reload && !a.Auto {
			d.verdicts[res] = d.verdictOf(res, a, false)
			wt := watchedFrom(res, st)
			wt.Named = true
			d.keys.watchedKeys(&wt, st)
			set[res] = wt
		}
	}
}

// deletedResources keeps a resource the record holds that is gone and still
// named in the set as missing, so its deletion is a change.
func (d *decider) deletedResources(k refs.Kind, record map[string]string, set map[Resource]Watched) {
	ns := d.v.Object.GetNamespace()
	for entry, h := range record {
		rk, name, ok := strings.Cut(entry, "/")
		if !ok || refs.Kind(rk) != k || name == "*" || h == "" {
			continue
		}
		res := Resource{k, name}
		if _, done := set[res]; done {
			continue
		}
		if d.r.Resource(k, ns, name).Exists {
			continue // there, but no longer watched (ignored): not a deletion
		}
		a := d.o.Names.Decide(d.w, annotations.Resource{Kind: k, Name: name}, d.o.AutoReloadAll)
		if a.Reload && !a.Auto {
			d.verdicts[res] = d.verdictOf(res, a, false)
			set[res] = Watched{Resource: res, Named: true}
		}
	}
}

// verdictOf records a decision of annotations. A missing resource was
// decided as if it carried match (usedResources): when search is what
// watches it, the detail says so rather than credit an annotation it lacks.
func (d *decider) verdictOf(res Resource, a annotations.Decision, missing bool) Verdict {
	vd := Verdict{Resource: res, Watched: a.Reload, Rule: a.Rule, Detail: a.Detail}
	if missing && a.Rule == annotations.RuleSearchMatch {
		vd.Detail = fmt.Sprintf("watched: %s=\"true\" (a missing %s counts as matched)", d.o.Names.Search, res.Kind.Title())
	}
	return vd
}

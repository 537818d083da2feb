package explain

import (
	"fmt"
	"strings"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

type resKey struct {
	kind refs.Kind
	name string
}

func (k resKey) String() string { return string(k.kind) + "/" + k.name }

// resources lists every resource the template uses, and those it watches
// without using them (named reloads), with the controller's decision and the
// rule it gives (d.Verdicts). It is one loop over the resources with one
// case per verdict.
func resources(co controller.Options, v workload.View, d decide.Decision, existing map[string]map[string]string, unreadable map[string]string) []Resource {
	uses := map[resKey][]Use{}
	for _, u := range refs.Uses(&v.Template.Spec) {
		k := resKey{u.Kind, u.Name}
		uses[k] = append(uses[k], Use{Via: string(u.Via), Container: u.Container, Init: u.Init, Volume: u.Volume, MountPath: u.MountPath, SubPath: u.SubPath})
	}
	watched := map[resKey]decide.Watched{}
	for _, w := range d.Watched {
		watched[resKey{w.Kind, w.Name}] = w
	}
	pending := map[resKey]decide.Reload{}
	for _, p := range d.Reloads {
		pending[resKey{p.Kind, p.Name}] = p
	}
	// A due reload the change does not carry has no container for its
	// marker: the controller skips it (no_container).
	carried := map[resKey]bool{}
	for _, p := range d.Applied {
		carried[resKey{p.Kind, p.Name}] = true
	}
	var order []resKey
	seen := map[resKey]bool{}
	for _, r := range refs.Find(&v.Template.Spec) {
		k := resKey{r.Kind, r.Name}
		seen[k] = true
		order = append(order, k)
	}
	for _, w := range d.Watched {
		if k := (resKey{w.Kind, w.Name}); !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	verdicts := map[resKey]decide.Verdict{}
	for _, vd := range d.Verdicts {
		verdicts[resKey{vd.Kind, vd.Name}] = vd
	}
	out := make([]Resource, 0, len(order))
	for _, k := range order {
		_, exists := existing[k.String()]
		vd := verdicts[k]
		r := Resource{Kind: kindTitle(k.kind), Name: k.name, Uses: uses[k], Exists: exists}
		if h, ok := d.Record[k.String()]; ok {
			r.Applied = h
		}
		w, isWatched := watched[k]
		if isWatched {
			r.Hash = w.Hash
			// Applied shows what the record or a marker says; a first-sight
			// verdict is not a hash that was ever applied.
			if w.Baseline.Known && w.Baseline.From != decide.FromFirstSight {
				r.Applied = w.Baseline.Hash
			}
			if w.Scope.Why != "" {
				r.Keys = &Keys{All: !w.Scope.PerKey, Only: w.Scope.Keys, Why: w.Scope.Why}
			}
		}
		if p, ok := pending[k]; ok {
			r.Due, r.Change = true, p.Change.String()
			if !carried[k] {
				r.Due = false
				r.Change = p.Change.String() + " (no container to carry the reload marker: the controller skips it, no_container)"
			}
		}
		why := unreadable[k.String()]
		switch {
		case vd.Rule == decide.RuleKindIgnored:
			r.Reason, r.Detail = ReasonKindIgnored, vd.Detail
		case why != "":
			// What the controller's code decided from its absence is void.
			r.Reason, r.Detail = ReasonUnreadable, "could not read it: "+why+"; its watch status is unknown"
			r.Hash, r.Due, r.Change = "", false, ""
		case isWatched && w.Hash == "" && exists:
			r.Reason = ReasonLabelSelector
			r.Detail = fmt.Sprintf("it exists but does not match --resource-label-selector=%s: the controller does not see it, so its changes never reload", co.ResourceSelector)
		case isWatched:
			r.Watched = true
			r.Reason, r.Detail = ruleReason(vd.Rule), vd.Detail
			if w.Hash == "" {
				r.Reason = ReasonMissing
				r.Detail += "; it does not exist (the controller reloads when it appears only with --reload-on-create)"
			}
		default:
			r.Reason, r.Detail = ruleReason(vd.Rule), vd.Detail
			if !exists {
				r.Detail += " (it does not exist either)"
			}
		}
		out = append(out, r)
	}
	return out
}

// ruleReason turns the rule of the controller's decision into explain's stable
// reason code: several rules share one code (auto, typed auto and
// --auto-reload-all are all "auto").
func ruleReason(rule annotations.Rule) string {
	switch rule {
	case annotations.RuleIgnored:
		return ReasonIgnoreAnnotation
	case annotations.RuleAuto, annotations.RuleTypedAuto, annotations.RuleAutoReloadAll:
		return ReasonAuto
	case annotations.RuleSearchMatch:
		return ReasonSearch
	case annotations.RuleAutoFalse, annotations.RuleTypedAutoFalse:
		return ReasonAutoFalse
	case decide.RuleKindIgnored:
		return ReasonKindIgnored
	}
	// The others keep their name: named, excluded, search-without-match,
	// typed-auto-other-kind, not-named, not-opted-in.
	return string(rule)
}

// hints are problems nobody reports: what the kubelet never refreshes,
// annotations on the wrong object.
func hints(co controller.Options, v workload.View, r *Report, existing map[string]map[string]string, d decide.Decision) []string {
	n := co.Names
	var out []string
	for _, res := range r.Resources {
		for _, u := range res.Uses {
			if u.SubPath == "" {
				continue
			}
			tail := "only a reload (new pods) delivers a change"
			if !res.Watched {
				tail += ", and the controller does not reload for it: running pods keep the old content until restarted"
			}
			out = append(out, fmt.Sprintf("%s %s is mounted with subPath %q in container %s at %s: the kubelet never refreshes subPath mounts; %s",
				res.Kind, res.Name, u.SubPath, u.Container, u.MountPath, tail))
		}
	}
	for _, a := range r.OptIn.Shadowed {
		kinds := strings.Join(a.NotReadFor, " and ")
		out = append(out, fmt.Sprintf("annotation %s is not read for %s: the metadata carries reload annotations for them, and the metadata wins; move it to the metadata",
			Annotation{Key: a.Key, Value: a.Value, On: a.On}, kinds))
	}
	for where, m := range map[string]map[string]string{"metadata": v.Object.GetAnnotations(), "pod template": v.Template.Annotations} {
		if _, ok := m[n.Match]; ok {
			out = append(out, fmt.Sprintf("annotation %s on the workload's %s has no effect: it belongs on the ConfigMap or Secret", n.Match, where))
		}
		if _, ok := m[n.Ignore]; ok {
			out = append(out, fmt.Sprintf("annotation %s on the workload's %s has no effect: it belongs on a ConfigMap or Secret (to stop reloads of this workload, remove its reload annotations)", n.Ignore, where))
		}
	}
	workloadKeys := n.MisplacedOnResource()
	for _, res := range r.Resources {
		ann := existing[string(kindOf(res.Kind))+"/"+res.Name]
		for _, k := range workloadKeys {
			if _, ok := ann[k]; ok {
				out = append(out, fmt.Sprintf("%s %s carries %s, which has effect only on a workload (Deployment, StatefulSet, ...)", res.Kind, res.Name, k))
			}
		}
	}
	if r.OptIn.OptedIn && !d.HasRecord && r.Controller.Running == "yes" && r.Scope.InScope {
		out = append(out, "a running controller has not recorded this workload yet: if this lasts, check the controller's logs and its RBAC in this namespace")
	}
	return out
}

func kindOf(title string) refs.Kind {
	for _, k := range []refs.Kind{refs.Secret, refs.SecretProviderClass} {
		if kindTitle(k) == title {
			return k
		}
	}
	return refs.ConfigMap
}

package explain

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/reloader-dev/reloader/controller"
	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

type resKey struct {
	kind refs.Kind
	name string
}

func (k resKey) String() string { return string(k.kind) + "/" + k.name }

// resources lists every resource the template uses, and those it watches
// without using them (named reloads), with the controller's decision and why.
// It is one loop over the resources with one case per verdict.
func resources(co controller.Options, v workload.View, in controller.Inspection, existing map[string]map[string]string, unreadable map[string]string) []Resource {
	uses := map[resKey][]Use{}
	for _, u := range refs.Uses(&v.Template.Spec) {
		k := resKey{u.Kind, u.Name}
		uses[k] = append(uses[k], Use{Via: string(u.Via), Container: u.Container, Init: u.Init, Volume: u.Volume, MountPath: u.MountPath, SubPath: u.SubPath})
	}
	watched := map[resKey]controller.WatchedResource{}
	for _, w := range in.Watched {
		watched[resKey{w.Kind, w.Name}] = w
	}
	pending := map[resKey]controller.PendingReload{}
	for _, p := range in.Pending {
		pending[resKey{p.Kind, p.Name}] = p
	}
	var order []resKey
	seen := map[resKey]bool{}
	for _, r := range refs.Find(&v.Template.Spec) {
		k := resKey{r.Kind, r.Name}
		seen[k] = true
		order = append(order, k)
	}
	for _, w := range in.Watched {
		if k := (resKey{w.Kind, w.Name}); !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	wl := annotations.Workload{Meta: v.Object.GetAnnotations(), Template: v.Template.Annotations}
	out := make([]Resource, 0, len(order))
	for _, k := range order {
		ann, exists := existing[k.String()]
		r := Resource{Kind: kindTitle(k.kind), Name: k.name, Uses: uses[k], Exists: exists}
		if h, ok := in.Record[k.String()]; ok {
			r.Applied = h
		}
		w, isWatched := watched[k]
		if isWatched {
			r.Hash = w.Hash
			if w.Known {
				r.Applied = w.Applied
			}
		}
		if p, ok := pending[k]; ok {
			r.Due, r.Change = true, p.Change
			if p.NoContainer {
				r.Due = false
				r.Change = p.Change + " (no container to carry the reload marker: the controller skips it, no_container)"
			}
		}
		why := unreadable[k.String()]
		switch {
		case kindIgnored(co, k.kind):
			r.Reason, r.Detail = ReasonKindIgnored, kindIgnoredDetail(k.kind)
		case why != "":
			// What the controller's code decided from its absence is void.
			r.Reason, r.Detail = ReasonUnreadable, "could not read it: "+why+"; its watch status is unknown"
			r.Hash, r.Due, r.Change = "", false, ""
		case isWatched && !w.Exists && exists:
			r.Reason = ReasonLabelSelector
			r.Detail = fmt.Sprintf("it exists but does not match --resource-label-selector=%s: the controller does not see it, so its changes never reload", co.ResourceSelector)
		case isWatched:
			r.Watched = true
			r.Reason, r.Detail = watchedHow(co, wl, k, ann)
			if !w.Exists {
				r.Reason = ReasonMissing
				r.Detail += "; it does not exist (the controller reloads when it appears only with --reload-on-create)"
			}
		default:
			r.Reason, r.Detail = notWatchedWhy(co, wl, k, ann)
			if !exists {
				r.Detail += " (it does not exist either)"
			}
		}
		out = append(out, r)
	}
	return out
}

func kindIgnored(co controller.Options, k refs.Kind) bool { return co.DecideOptions().KindIgnored(k) }

func kindIgnoredDetail(k refs.Kind) string {
	switch k {
	case refs.ConfigMap:
		return "the controller does not watch ConfigMaps (--resources-to-ignore=configMaps)"
	case refs.Secret:
		return "the controller does not watch Secrets (--resources-to-ignore=secrets)"
	}
	return "the controller does not watch SecretProviderClasses (--enable-csi-integration is off)"
}

// on says where the decision reads the workload's annotations for kind.
func on(n annotations.Names, w annotations.Workload, kind refs.Kind) (map[string]string, string) {
	src := n.Source(w, kind)
	if len(src) > 0 && maps.Equal(src, w.Meta) {
		return src, "metadata"
	}
	return src, "pod template"
}

// watchedHow says which rule of annotations.Decide watches the resource,
// checked in Decide's order.
func watchedHow(co controller.Options, w annotations.Workload, k resKey, ann map[string]string) (string, string) {
	n := co.Names
	src, where := on(n, w, k.kind)
	if list, ok := src[n.ReloadKey(k.kind)]; ok {
		if matched, _ := annotations.MatchList(list, k.name); matched {
			return ReasonNamed, fmt.Sprintf("watched: named by %s=%q on the %s", n.ReloadKey(k.kind), list, where)
		}
	}
	if src[n.Search] == "true" && ann[n.Match] == "true" {
		return ReasonSearch, fmt.Sprintf("watched: %s=\"true\" on the %s and %s=\"true\" on the %s", n.Search, where, n.Match, kindTitle(k.kind))
	}
	for _, key := range []string{n.Auto, n.TypedAutoKey(k.kind)} {
		if b, err := strconv.ParseBool(src[key]); err == nil && b {
			return ReasonAuto, fmt.Sprintf("watched: %s=%q on the %s", key, src[key], where)
		}
	}
	return ReasonAuto, "watched: --auto-reload-all"
}

// notWatchedWhy says why annotations.Decide does not watch the resource.
func notWatchedWhy(co controller.Options, w annotations.Workload, k resKey, ann map[string]string) (string, string) {
	n := co.Names
	title := kindTitle(k.kind)
	if val, ok := ann[n.Ignore]; ok {
		if b, _ := strconv.ParseBool(val); b {
			return ReasonIgnoreAnnotation, fmt.Sprintf("not watched: the %s carries %s=%q", title, n.Ignore, val)
		}
	}
	src, where := on(n, w, k.kind)
	excl, ok := w.Meta[n.ExcludeKey(k.kind)]
	exclOn := "metadata"
	if !ok {
		excl, exclOn = src[n.ExcludeKey(k.kind)], where
	}
	for _, e := range strings.Split(excl, ",") {
		if strings.TrimSpace(e) == k.name {
			return ReasonExcluded, fmt.Sprintf("not watched: excluded by %s=%q on the %s", n.ExcludeKey(k.kind), excl, exclOn)
		}
	}
	if src[n.Search] == "true" && ann[n.Match] != "true" {
		return ReasonSearchWithoutMatch, fmt.Sprintf("not watched: %s=\"true\" on the %s, but the %s lacks %s=\"true\"", n.Search, where, title, n.Match)
	}
	if val, set := src[n.Auto]; set {
		if b, _ := strconv.ParseBool(val); !b {
			return ReasonAutoFalse, fmt.Sprintf("not watched: %s=%q on the %s opts out", n.Auto, val, where)
		}
	}
	if val, set := src[n.TypedAutoKey(k.kind)]; set {
		return ReasonAutoFalse, fmt.Sprintf("not watched: %s=%q on the %s opts out", n.TypedAutoKey(k.kind), val, where)
	}
	for _, other := range []refs.Kind{refs.ConfigMap, refs.Secret, refs.SecretProviderClass} {
		if other == k.kind {
			continue
		}
		osrc, owhere := on(n, w, other)
		if b, _ := strconv.ParseBool(osrc[n.TypedAutoKey(other)]); b {
			return ReasonTypedAutoOtherKind, fmt.Sprintf("not watched: %s=%q on the %s covers only %ss; add %s=\"true\" for %ss",
				n.TypedAutoKey(other), osrc[n.TypedAutoKey(other)], owhere, kindTitle(other), n.TypedAutoKey(k.kind), title)
		}
	}
	if list, ok := src[n.ReloadKey(k.kind)]; ok {
		return ReasonNotNamed, fmt.Sprintf("not watched: %s=%q on the %s does not name it", n.ReloadKey(k.kind), list, where)
	}
	return ReasonNotOptedIn, fmt.Sprintf("not watched: the workload is not opted in for %ss (add %s=\"true\" to its metadata)", title, n.Auto)
}

// hints are problems nobody reports: what the kubelet never refreshes,
// annotations on the wrong object.
func hints(co controller.Options, v workload.View, r *Report, existing map[string]map[string]string, in controller.Inspection) []string {
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
	if r.OptIn.OptedIn && !in.HasRecord && r.Controller.Running == "yes" && r.Scope.InScope {
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

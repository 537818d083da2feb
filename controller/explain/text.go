package explain

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteText writes the report for people. It stays whole because it is
// the report's layout read top to bottom: one section after another.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("%s: %s", r.Workload, r.Summary)
	p("verdict: %s (exit %d)", r.Verdict, r.ExitCode())

	p("\nopt-in:")
	switch {
	case r.OptIn.AutoReloadAll:
		p("  opted in by --auto-reload-all")
	case !r.OptIn.OptedIn:
		p("  not opted in; to opt in: %s", r.OptIn.Suggest)
	}
	for _, a := range r.OptIn.By {
		p("  %s", a)
	}
	for _, a := range r.OptIn.Shadowed {
		p("  %s: not read for %s (the metadata wins)", Annotation{Key: a.Key, Value: a.Value, On: a.On}, strings.Join(a.NotReadFor, ", "))
	}

	p("\nresources:")
	if len(r.Resources) == 0 {
		p("  none: the pod template uses no ConfigMap, Secret or SecretProviderClass")
	}
	for _, res := range r.Resources {
		p("  %s %s: %s", res.Kind, res.Name, res.Detail)
		for _, u := range res.Uses {
			p("    used by %s", describeUse(u))
		}
		if k := res.Keys; k != nil {
			if k.All {
				p("    keys: all count; %s", k.Why)
			} else {
				p("    keys: only %s count; %s", strings.Join(k.Only, ", "), k.Why)
			}
		}
		switch {
		case res.Due:
			p("    reload due (%s): hash %s, applied %s", res.Change, short(res.Hash), short(res.Applied))
		case res.Change != "":
			p("    %s", res.Change)
		case res.Watched && res.Applied == "" && res.Hash != "":
			p("    hash %s, nothing applied yet (the controller takes it as the baseline)", short(res.Hash))
		case res.Watched:
			p("    up to date: hash %s applied", short(res.Hash))
		}
	}
	if len(r.Problems) > 0 {
		p("\nproblems (the controller reports them in ReloadFail Events):")
		for _, s := range r.Problems {
			p("  %s", s)
		}
	}
	if len(r.Holds) > 0 {
		p("\nholds:")
		for _, s := range r.Holds {
			p("  %s", s)
		}
	}
	p("\nlast reload:")
	if r.LastReload == nil {
		p("  none recorded in Events")
	} else {
		p("  %s (%s ago), strategy %s: %s", r.LastReload.Time.UTC().Format(time.RFC3339),
			time.Since(r.LastReload.Time).Round(time.Second), r.LastReload.Strategy, r.LastReload.Message)
	}
	p("\nscope:")
	if r.Scope.InScope {
		p("  in scope")
	} else {
		p("  out of scope: %s", r.Scope.Reason)
	}
	p("  namespaces: %s; ignored namespaces: %s; namespace selector: %s; resource selector: %s",
		joinOr(r.Scope.Namespaces, "all"), joinOr(r.Scope.NamespacesToIgnore, "none"), orNoneS(r.Scope.NamespaceSelector), orNoneS(r.Scope.ResourceSelector))
	p("  ignored resources: %s; ignored workload types: %s", joinOr(r.Scope.IgnoredResources, "none"), joinOr(r.Scope.IgnoredWorkloads, "none"))
	p("\ncontroller:")
	leader := ""
	if r.Controller.Leader != "" {
		leader = ", leader " + r.Controller.Leader
	}
	p("  running: %s%s; options from %s", r.Controller.Running, leader, r.Controller.OptionsFrom)
	for _, d := range r.Controller.Details {
		p("  %s", d)
	}
	if len(r.Hints) > 0 {
		p("\nhints:")
		for _, h := range r.Hints {
			p("  %s", h)
		}
	}
	if len(r.Unreadable) > 0 {
		p("\ncould not read (the explanation may be incomplete):")
		for _, u := range r.Unreadable {
			p("  %s", u)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func describeUse(u Use) string {
	ctr := "container " + u.Container
	if u.Init {
		ctr = "init container " + u.Container
	}
	switch u.Via {
	case "volume", "projected":
		vol := "volume " + u.Volume
		if u.Via == "projected" {
			vol = "projected " + vol
		}
		if u.Container == "" {
			return vol + " (mounted by no container)"
		}
		s := fmt.Sprintf("%s in %s at %s", vol, ctr, u.MountPath)
		if u.SubPath != "" {
			s += fmt.Sprintf(" (subPath %s)", u.SubPath)
		}
		return s
	}
	return u.Via + " in " + ctr
}

func short(h string) string {
	if h == "" {
		return "(none)"
	}
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// joinOr joins s, or says empty when there is nothing.
func joinOr(s []string, empty string) string {
	if len(s) == 0 {
		return empty
	}
	return strings.Join(s, ",")
}

func orNoneS(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

package workload

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Declared is a workload kind the user declared (--workload-kind): a custom
// resource that carries a pod template, reloaded like a Deployment through
// the dynamic client. The built-in kinds know their template's place; a
// declared kind says where its is.
type Declared struct {
	Kind Kind
	GVR  schema.GroupVersionResource
	// TemplatePath is where the pod template lives, from the object's root
	// ("spec", "template" by default). It always starts at spec: metadata
	// and status are not the kind's to declare.
	TemplatePath []string
	// ProgressCondition is the status condition whose status "True" says
	// the kind's rollout is done; empty when the kind reports none.
	ProgressCondition string
}

// defaultTemplatePath is a declared kind's template path when none is given.
func defaultTemplatePath() []string { return []string{"spec", "template"} }

// The shapes of a declaration's names: Kubernetes' own (a CRD's group is a
// DNS subdomain with a dot, its plural a DNS label, its kind a Go-style
// identifier), and a template path of JSON field names. Compiled per call:
// declarations are read once, at start.
func matches(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }

const (
	groupPattern     = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$`
	versionPattern   = `^v[0-9]+((alpha|beta)[0-9]+)?$`
	resourcePattern  = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	kindPattern      = `^[A-Z][A-Za-z0-9]{0,62}$`
	fieldPattern     = `^[A-Za-z_][A-Za-z0-9_-]{0,62}$`
	conditionPattern = `^[A-Za-z][A-Za-z0-9_.-]{0,62}$`
)

// ParseDeclared reads one --workload-kind value:
//
//	GROUP/VERSION/RESOURCE,kind=KIND[,template=.spec.template][,progress=none|condition:TYPE]
//
// e.g. "apps.kruise.io/v1alpha1/clonesets,kind=CloneSet".
func ParseDeclared(s string) (Declared, error) {
	fields := strings.Split(s, ",")
	gvr := strings.Split(fields[0], "/")
	if len(gvr) != 3 {
		return Declared{}, fmt.Errorf("workload kind %q: want GROUP/VERSION/RESOURCE first (apps.kruise.io/v1alpha1/clonesets)", s)
	}
	d := Declared{GVR: schema.GroupVersionResource{Group: gvr[0], Version: gvr[1], Resource: gvr[2]}, TemplatePath: defaultTemplatePath()}
	switch {
	case !matches(groupPattern, d.GVR.Group) || len(d.GVR.Group) > 253:
		return Declared{}, fmt.Errorf("workload kind %q: group %q is not a DNS subdomain with a dot (custom resources only)", s, d.GVR.Group)
	case !matches(versionPattern, d.GVR.Version):
		return Declared{}, fmt.Errorf("workload kind %q: version %q is not a Kubernetes API version (v1, v1alpha1)", s, d.GVR.Version)
	case !matches(resourcePattern, d.GVR.Resource) || len(d.GVR.Resource) > 63:
		return Declared{}, fmt.Errorf("workload kind %q: resource %q is not a lower-case plural name", s, d.GVR.Resource)
	}
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		key, val, ok := strings.Cut(f, "=")
		if !ok || seen[key] {
			return Declared{}, fmt.Errorf("workload kind %q: %q is not one KEY=VALUE of kind, template, progress", s, f)
		}
		seen[key] = true
		if err := d.set(key, val); err != nil {
			return Declared{}, fmt.Errorf("workload kind %q: %w", s, err)
		}
	}
	if d.Kind == "" {
		return Declared{}, fmt.Errorf("workload kind %q: kind=KIND is missing (the kind's name, as in its objects' \"kind\")", s)
	}
	return d, nil
}

func (d *Declared) set(key, val string) error {
	switch key {
	case "kind":
		if !matches(kindPattern, val) {
			return fmt.Errorf("kind %q: want a Kind name (CloneSet)", val)
		}
		if _, builtIn := specOf(Kind(val)); builtIn {
			return fmt.Errorf("kind %q is built in", val)
		}
		d.Kind = Kind(val)
	case "template":
		path := strings.Split(strings.TrimPrefix(val, "."), ".")
		if !strings.HasPrefix(val, ".spec.") || len(path) > 8 {
			return fmt.Errorf("template %q: want a path under .spec (.spec.template), at most 8 fields deep", val)
		}
		for _, p := range path {
			if !matches(fieldPattern, p) {
				return fmt.Errorf("template %q: field %q is not a field name", val, p)
			}
		}
		d.TemplatePath = path
	case "progress":
		cond, isCond := strings.CutPrefix(val, "condition:")
		switch {
		case val == "none":
			d.ProgressCondition = ""
		case isCond && matches(conditionPattern, cond):
			d.ProgressCondition = cond
		default:
			return fmt.Errorf("progress %q: want none or condition:TYPE", val)
		}
	default:
		return fmt.Errorf("unknown key %q: want kind, template or progress", key)
	}
	return nil
}

// String is the declaration as ParseDeclared reads it.
func (d Declared) String() string {
	s := d.GVR.Group + "/" + d.GVR.Version + "/" + d.GVR.Resource + ",kind=" + string(d.Kind)
	if !slices.Equal(d.TemplatePath, defaultTemplatePath()) {
		s += ",template=." + strings.Join(d.TemplatePath, ".")
	}
	if d.ProgressCondition != "" {
		s += ",progress=condition:" + d.ProgressCondition
	}
	return s
}

// Table is every kind the controller reloads beyond the built-in table: the
// declared kinds, built once from the options and handed to whatever reads,
// caches or writes them. The zero Table declares nothing.
type Table struct{ declared []Declared }

// NewTable checks the declarations against each other: a kind name and a
// resource are declared once.
func NewTable(declared []Declared) (Table, error) {
	kinds, gvrs := map[Kind]bool{}, map[schema.GroupVersionResource]bool{}
	for _, d := range declared {
		if kinds[d.Kind] || gvrs[d.GVR] {
			return Table{}, fmt.Errorf("workload kind %s: declared twice", d)
		}
		if _, builtIn := specOf(d.Kind); builtIn {
			return Table{}, fmt.Errorf("workload kind %s: a built-in kind", d)
		}
		for _, k := range All() {
			if gvr, custom := GVR(k); custom && gvr == d.GVR {
				return Table{}, fmt.Errorf("workload kind %s: the resource of the built-in kind %s", d, k)
			}
		}
		kinds[d.Kind], gvrs[d.GVR] = true, true
	}
	return Table{declared: slices.Clone(declared)}, nil
}

// Declared lists the declared kinds in the order given.
func (t Table) Declared() []Declared { return slices.Clone(t.declared) }

// Kinds are the declared kinds' names, in the order given.
func (t Table) Kinds() []Kind {
	out := make([]Kind, 0, len(t.declared))
	for _, d := range t.declared {
		out = append(out, d.Kind)
	}
	return out
}

// Lookup is k's declaration; false for a kind not declared (a built-in one).
func (t Table) Lookup(k Kind) (Declared, bool) {
	for _, d := range t.declared {
		if d.Kind == k {
			return d, true
		}
	}
	return Declared{}, false
}

// GVR is where the apiserver serves k, declared or built-in custom; false
// for a built-in kind of client-go's.
func (t Table) GVR(k Kind) (schema.GroupVersionResource, bool) {
	if d, ok := t.Lookup(k); ok {
		return d.GVR, true
	}
	return GVR(k)
}

// All is every kind the controller can reload: the built-in ones, then the
// declared ones.
func (t Table) All() []Kind { return append(All(), t.Kinds()...) }

// ByAlias is ByAlias with the declared kinds' names: the kind (any case) and
// its resource.
func (t Table) ByAlias(name string) (Kind, bool) {
	if k, ok := ByAlias(name); ok {
		return k, true
	}
	for _, d := range t.declared {
		if strings.EqualFold(name, string(d.Kind)) || strings.EqualFold(name, d.GVR.Resource) {
			return d.Kind, true
		}
	}
	return "", false
}

// Transform is the informer transform of k: its metadata and the pod
// template at its path, as for Argo Rollouts.
func (t Table) Transform(k Kind) func(any) (any, error) {
	path, condition := defaultTemplatePath(), ""
	if d, ok := t.Lookup(k); ok {
		path, condition = d.TemplatePath, d.ProgressCondition
	}
	return func(obj any) (any, error) {
		out, err := customAt(obj, path)
		if u, isU := obj.(*unstructured.Unstructured); isU && err == nil && condition != "" {
			out.(*Custom).Progress = progressOf(u, condition)
		}
		return out, err
	}
}

// Tracked reports whether k is a declared kind that reports its rollout's
// progress (progress=condition:TYPE): the rollout budget holds its reloads
// and counts its rollouts as a Deployment's.
func (t Table) Tracked(k Kind) bool {
	d, ok := t.Lookup(k)
	return ok && d.ProgressCondition != ""
}

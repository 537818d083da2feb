package decide

import "strings"

// envVarPrefix begins every reload variable (EnvVarName).
const envVarPrefix = "STAKATER_"

// Marker is a reload marker the pod template carries, whichever strategy
// wrote it: what tells a reader how the last reload was made.
type Marker struct {
	// Strategy is the strategy that writes such a marker; empty when the
	// template carries none.
	Strategy Strategy
	// Key is the annotation or the variable; Container holds the variable.
	Key       string
	Container string
}

// marker finds the template's marker: the last-reloaded-from annotation,
// else the first reload variable set by value, as evidence reads them.
func (d *decider) marker() Marker {
	if _, ok := d.v.Template.Annotations[d.o.Names.LastReloadedFrom]; ok {
		return Marker{Strategy: Annotations, Key: d.o.Names.LastReloadedFrom}
	}
	for _, c := range d.v.Template.Spec.Containers {
		for _, e := range c.Env {
			if strings.HasPrefix(e.Name, envVarPrefix) && e.ValueFrom == nil {
				return Marker{Strategy: EnvVars, Key: e.Name, Container: c.Name}
			}
		}
	}
	return Marker{}
}

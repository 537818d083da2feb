package decide

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/reloader-dev/reloader/controller/refs"
	"github.com/reloader-dev/reloader/controller/workload"
)

// LastReload is our annotation, on the workload's metadata, holding when the
// controller last rolled it: the durable clock of storm control.
const LastReload = "reloader.dev/last-reload"

// change is the write one sync decided on: the change, the reloads it
// carries, and what is deliberately left out of it.
type change struct {
	change  workload.Change
	applied []Reload
	skips   []Skip
	// noContainer counts reloads with no container to carry a marker.
	noContainer int
}

// buildChange turns the planned reloads (sorted) into one workload.Change:
// the reload markers of the strategy, the new record, storm control's clock
// and, for a Deployment with a pause period, the pause. It stays whole: the
// parts of one write are decided together, each reading what the last set.
func (d *decider) buildChange(reloads []Reload, skips []Skip, record workload.Change) change {
	c := change{change: record, skips: skips}
	ch := &c.change
	v := d.v
	spec := &v.Template.Spec
	if v.Kind.Has(workload.RestartAt) && v.Object.GetAnnotations()[d.o.Names.RolloutStrategy] == "restart" {
		// Argo's restart strategy: restart the pods in place through
		// spec.restartAt, leaving the template (and its revision) alone.
		at := d.now.UTC().Format(time.RFC3339)
		ch.RestartAt = &at
		c.applied = reloads
		reloads = nil
	}
	for _, r := range reloads {
		container, ok := refs.ContainerFor(spec, r.Kind, r.Name, r.Auto)
		if !ok {
			c.noContainer++
			continue
		}
		name := EnvVarName(r.Kind, r.Name)
		if d.o.Strategy == EnvVars && r.Change == Deleted && !hasEnv(spec, container, name) {
			// Nothing to remove: as in the original, the deletion of a
			// resource never reloaded for changes nothing.
			c.skips = append(c.skips, Skip{r.Resource, SkipNoVariable})
			continue
		}
		c.applied = append(c.applied, r)
		switch d.o.Strategy {
		case EnvVars:
			env := workload.EnvChange{Container: container, Name: name, Value: r.Hash}
			if r.Change == Deleted {
				env.Remove = true
			}
			ch.Env = append(ch.Env, env)
		case Annotations:
			h := r.Hash
			if r.Change == Deleted {
				h = d.o.Hash.Empty()
			}
			// Strings and an integer: encoding cannot fail.
			src, _ := json.Marshal(reloadSource{
				Type: r.Kind.Upper(), Name: r.Name, Namespace: v.Object.GetNamespace(),
				Hash: h, ContainerRefs: []string{container}, ObservedAt: d.now.Unix(),
			})
			// One annotation holds one source; the last one wins, as in the
			// original. The record keeps every hash.
			ch.TemplateAnnotations = map[string]string{d.o.Names.LastReloadedFrom: string(src)}
		}
	}
	if ch.Rollout() && d.o.MinReloadInterval > 0 {
		setMeta(ch, LastReload, d.now.UTC().Format(time.RFC3339Nano))
	}
	if v.Kind.Has(workload.Pausable) && ch.Rollout() && !pausedByPerson(v, d.o.Names.PausedAt) {
		if s, ok := v.Object.GetAnnotations()[d.o.Names.PausePeriod]; ok {
			if _, err := parsePausePeriod(s); err == nil {
				paused := true
				ch.Paused = &paused
				setMeta(ch, d.o.Names.PausedAt, d.now.UTC().Format(time.RFC3339))
			}
		}
	}
	return c
}

func setMeta(ch *workload.Change, key, value string) {
	if ch.MetaAnnotations == nil {
		ch.MetaAnnotations = map[string]*string{}
	}
	ch.MetaAnnotations[key] = &value
}

func hasEnv(spec *corev1.PodSpec, container, name string) bool {
	for _, ctr := range spec.Containers {
		if ctr.Name != container {
			continue
		}
		for _, e := range ctr.Env {
			if e.Name == name {
				return true
			}
		}
	}
	return false
}

// evidence reads what a reload marker in the template says was last applied
// for res: a STAKATER_* variable in any container, or the last-reloaded-from
// annotation naming res. Both strategies are read, so switching strategy or
// migrating from the original never rolls a workload that is up to date.
func (d *decider) evidence(res Resource) (string, bool) {
	name := EnvVarName(res.Kind, res.Name)
	for _, ctr := range d.v.Template.Spec.Containers {
		for _, e := range ctr.Env {
			if e.Name == name && e.ValueFrom == nil {
				return e.Value, true
			}
		}
	}
	if s, ok := d.v.Template.Annotations[d.o.Names.LastReloadedFrom]; ok {
		var src reloadSource
		if json.Unmarshal([]byte(s), &src) == nil && src.Name == res.Name && src.Namespace == d.v.Object.GetNamespace() && strings.EqualFold(src.Type, res.Kind.Upper()) {
			return src.Hash, true
		}
	}
	return "", false
}

// reloadSource is the original's last-reloaded-from JSON.
type reloadSource struct {
	Type          string   `json:"type"`
	Name          string   `json:"name"`
	Namespace     string   `json:"namespace"`
	Hash          string   `json:"hash"`
	ContainerRefs []string `json:"containerRefs"`
	ObservedAt    int64    `json:"observedAt"`
}

// EnvVarName is the original's reload variable name:
// STAKATER_<NAME>_CONFIGMAP|SECRET, the name upper-cased with every run of
// other characters turned into one underscore.
func EnvVarName(kind refs.Kind, name string) string {
	var b strings.Builder
	b.WriteString(envVarPrefix)
	upper := strings.ToUpper(name)
	lastValid := false
	for i := 0; i < len(upper); i++ {
		ch := upper[i]
		if (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') {
			b.WriteByte(ch)
			lastValid = true
		} else {
			if lastValid {
				b.WriteByte('_')
			}
			lastValid = false
		}
	}
	b.WriteByte('_')
	b.WriteString(kind.Upper())
	return b.String()
}

// tooSoon returns how long a reload must wait under MinReloadInterval.
func (d *decider) tooSoon() time.Duration {
	if d.o.MinReloadInterval <= 0 {
		return 0
	}
	last, err := time.Parse(time.RFC3339Nano, d.v.Object.GetAnnotations()[LastReload])
	if err != nil {
		return 0
	}
	return last.Add(d.o.MinReloadInterval).Sub(d.now)
}

// pause reads the pause of a workload (a Pausable kind) this controller
// paused: how long its period still runs, or (over, or no longer readable:
// never leave a workload paused) the change that resumes it.
func (d *decider) pause() (time.Duration, *workload.Change) {
	ann := d.v.Object.GetAnnotations()
	at, paused := ann[d.o.Names.PausedAt]
	if !paused || !d.v.Paused() {
		return 0, nil
	}
	period, err := parsePausePeriod(ann[d.o.Names.PausePeriod])
	start, terr := time.Parse(time.RFC3339, at)
	if err == nil && terr == nil {
		if remaining := start.Add(period).Sub(d.now); remaining > 0 {
			return remaining, nil
		}
	}
	return 0, d.resumeChange()
}

// pausedByPerson: the workload is paused and not by this controller (no
// paused-at annotation). Its pause is left alone, as the original does: the
// reload lands in the template and rolls out when that person resumes it.
func pausedByPerson(v workload.View, pausedAt string) bool {
	if !v.Paused() {
		return false
	}
	_, ours := v.Object.GetAnnotations()[pausedAt]
	return !ours
}

func parsePausePeriod(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: %w", s, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration", s)
	}
	return d, nil
}

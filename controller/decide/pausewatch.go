package decide

import (
	"encoding/json"
	"time"

	"github.com/reloader-dev/reloader/controller/workload"
)

// PauseWatch is the pause watchdog's finding on a paused Deployment that
// carries no paused-at annotation (stakater/Reloader #1016: a pause that
// stays forever). Who paused it and when comes from managedFields: the
// entry owning spec.paused and the time of that manager's write, which is
// no earlier than the pause, so the watchdog never reports a pause early.
type PauseWatch struct {
	// Manager is the field manager owning spec.paused ("" when no entry
	// owns it: the watchdog cannot date the pause and says nothing).
	Manager string
	// Since is the time of Manager's last write; Period the workload's
	// pause-period.
	Since  time.Time
	Period time.Duration
	// Ours: Manager is this controller's field manager. Its paused-at
	// annotation was lost (a person's edit, a GitOps sync), and the pause is
	// resumed like any pause of ours whose period is over.
	Ours bool
	// Outlived: the pause has lasted longer than Period; otherwise In is
	// how long until it will have.
	Outlived bool
	In       time.Duration
}

// pauseWatch looks at a paused Deployment without paused-at that carries a
// valid pause-period. nil when there is nothing to watch.
func (d *decider) pauseWatch() *PauseWatch {
	ann := d.v.Object.GetAnnotations()
	if !d.v.Paused() {
		return nil
	}
	if _, ours := ann[d.o.Names.PausedAt]; ours {
		return nil // pause() handles it
	}
	period, err := parsePausePeriod(ann[d.o.Names.PausePeriod])
	if err != nil {
		return nil
	}
	w := &PauseWatch{Period: period}
	for _, m := range d.v.Object.GetManagedFields() {
		if m.FieldsV1 == nil || m.Time == nil || !ownsPaused(m.FieldsV1.GetRawBytes()) {
			continue
		}
		if w.Manager == "" || m.Time.After(w.Since) {
			w.Manager, w.Since = m.Manager, m.Time.Time
		}
	}
	if w.Manager == "" {
		return nil
	}
	w.Ours = w.Manager == d.o.FieldManager
	if remaining := w.Since.Add(period).Sub(d.now); remaining > 0 {
		w.In = remaining
	} else {
		w.Outlived = true
	}
	return w
}

func ownsPaused(fields []byte) bool {
	var f struct {
		Spec map[string]json.RawMessage `json:"f:spec"`
	}
	if json.Unmarshal(fields, &f) != nil {
		return false
	}
	_, ok := f.Spec["f:paused"]
	return ok
}

// resumeChange ends a pause: spec.paused false, paused-at removed.
func (d *decider) resumeChange() *workload.Change {
	resume := false
	return &workload.Change{Paused: &resume, MetaAnnotations: map[string]*string{d.o.Names.PausedAt: nil}}
}

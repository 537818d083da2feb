package controller

import (
	"time"

	"golang.org/x/time/rate"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reloader-dev/reloader/controller/annotations"
	"github.com/reloader-dev/reloader/controller/decide"
	"github.com/reloader-dev/reloader/controller/internal/busy"
	"github.com/reloader-dev/reloader/controller/workload"
)

// Adoption writes the first applied-hashes record of every workload the
// initial list holds: at the 10x bench tier, 2,000 metadata-only PATCHes at
// start. Written as fast as the workers take them, they filled the client's
// rate limiter, and a reload's PATCH waited behind dozens of them (a p99 of
// 328 ms against the floor's 6 ms). So they are paced by a token bucket of
// their own (Options.AdoptionRate) and never block a worker: a sync whose
// record must wait reserves its slot, keeps the record it decided as a
// pending baseline in the key's state, and comes back in the background lane
// when the slot is due.
//
// The pending baseline stands for the written record in every decision until
// the write lands (adoptionGate.view): a change made while the write waits is
// judged against it and reloads, exactly as if the record had been written
// at once. It lives only in memory, like the informer caches: a restart
// before the write adopts the workload again, as it would have anyway.

// defaultAdoptionRate is adoption writes per second when Options leave it
// unset: a quarter of the default client rate (--kube-api-qps 200), so
// reloads always find tokens; 2,000 workloads are adopted in 40 s.
const defaultAdoptionRate = 50

// adoptionBurst lets a small cluster (or a handful of new workloads) be
// adopted at once.
const adoptionBurst = 10

// adoptionGate paces adoption writes: a gate on the RecordOnly step.
type adoptionGate struct {
	keys    *keyStates
	busy    *busy.Tracker
	limiter *rate.Limiter
	now     func() time.Time
}

func newAdoptionGate(keys *keyStates, b *busy.Tracker, perSecond float64, now func() time.Time) *adoptionGate {
	return &adoptionGate{keys: keys, busy: b, limiter: rate.NewLimiter(rate.Limit(perSecond), adoptionBurst), now: now}
}

// pendingRecord is an adoption record decided but not yet written.
type pendingRecord struct {
	uid  types.UID
	text string
	// due is when the reserved write slot comes or, when held, when the
	// record asks again for one.
	due  time.Time
	held bool
}

// view returns v as decisions must see it: with its pending record
// when its own annotation does not carry one yet, and that record (nil when
// none). A record on the object itself (ours landed, or a reload wrote one)
// ends the pending one.
func (g *adoptionGate) view(v workload.View) (workload.View, *pendingRecord) {
	key := v.Key()
	st := g.keys.read(key)
	p := st.pendingRecord
	if p == nil {
		return v, nil
	}
	if _, has := v.Object.GetAnnotations()[annotations.Applied]; has || p.uid != v.Object.GetUID() {
		g.keys.with(key, func(s *keyState) { s.pendingRecord = nil })
		return v, nil
	}
	dv, ok := withPendingRecord(v, p.text)
	if !ok {
		return v, nil
	}
	return dv, p
}

// withPendingRecord is v seen with record as its applied-hashes record.
// Views read the typed object, so this is one: a deep copy of the cached
// (stripped, small) object with the annotation added. ok is false for an
// object that cannot be copied (its record is written at once).
func withPendingRecord(v workload.View, record string) (workload.View, bool) {
	obj, ok := v.Object.(runtime.Object)
	if !ok {
		return v, false
	}
	cp := obj.DeepCopyObject()
	m, ok := cp.(metav1.Object)
	if !ok {
		return v, false
	}
	ann := make(map[string]string, len(m.GetAnnotations())+1)
	for k, val := range m.GetAnnotations() {
		ann[k] = val
	}
	ann[annotations.Applied] = record
	m.SetAnnotations(ann)
	dv, err := workload.ViewOf(cp)
	if err != nil || dv.Kind != v.Kind {
		return v, false
	}
	return dv, true
}

// hold says whether the adoption write of d's record for v must wait, and
// how long. The first call reserves a slot and keeps the record pending; a
// later sync of the same pending record writes when its slot is due. A
// record whose slot comes while reloads are being written steps aside
// (busy.Tracker) and reserves a fresh slot after them, so the records held
// in one busy spell are not all written at its end. Only a first record is
// paced: a workload with a record of its own writes at once.
func (g *adoptionGate) hold(v workload.View, d decide.Decision) (bool, time.Duration) {
	pending := g.pending(v)
	if pending == nil && d.HasRecord {
		return false, 0
	}
	if _, copyable := v.Object.(runtime.Object); !copyable {
		return false, 0 // it cannot carry a pending record
	}
	now := g.now()
	key := v.Key()
	keep := func(due time.Time, held bool) (bool, time.Duration) {
		// The record decided now (a workload edit may have changed it)
		// is the one its slot writes.
		p := &pendingRecord{uid: v.Object.GetUID(), text: d.NextRecord, due: due, held: held}
		g.keys.with(key, func(s *keyState) { s.pendingRecord = p })
		return true, due.Sub(now)
	}
	reserved := pending != nil && !pending.held
	switch hold := g.busy.Hold(); {
	case reserved && pending.due.After(now):
		return keep(pending.due, false)
	case hold > 0:
		return keep(now.Add(hold), true)
	case reserved:
		return false, 0
	}
	if due := now.Add(g.limiter.ReserveN(now, 1).DelayFrom(now)); due.After(now) {
		return keep(due, false)
	}
	return false, 0
}

// pending is v's adoption record waiting for its slot, nil when none.
func (g *adoptionGate) pending(v workload.View) *pendingRecord {
	p := g.keys.read(v.Key()).pendingRecord
	if p == nil || p.uid != v.Object.GetUID() {
		return nil
	}
	return p
}
